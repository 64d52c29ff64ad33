/**
 * A difference between the document the gateway is built on and an upstream's, classed by what it
 * does to this gateway (not to every possible client of the upstream).
 */

/**
 * - `breaking`: calls the gateway makes will fail, or GraphQL fields will error;
 * - `dangerous`: some calls or values may fail or change meaning (depending on the caller's
 *   credentials, arguments or a setting);
 * - `safe`: the gateway does not notice.
 */
export type ChangeClass = 'breaking' | 'dangerous' | 'safe';

export const CLASSES: readonly ChangeClass[] = ['breaking', 'dangerous', 'safe'];

/** One difference. */
export type Change = {
  class: ChangeClass;
  /** the operation as the gateway's document names it (`GET /pet/{petId}`), or the upstream's for an added one */
  operation: string;
  /** its operationId, when it has one */
  operationId?: string;
  /** what changed: ``response field `status` gained the value `adopted` `` */
  change: string;
  /** what that does to the gateway: ``→ `Pet.status` (enum PetStatus) would fail to serialize`` */
  effect: string;
  /** the GraphQL fields and arguments it affects (`Pet.status`, `Query.pet(id:)`) */
  affects: string[];
  /** the one-line message: `<operation>: <change> → <effect>` */
  message: string;
};

/** Collects the changes of one operation. */
export class ChangeList {
  readonly changes: Change[] = [];
  private readonly operation: string;
  private readonly operationId: string | undefined;

  constructor(operation: string, operationId: string | undefined) {
    this.operation = operation;
    this.operationId = operationId;
  }

  add(changeClass: ChangeClass, change: string, effect: string, affects: readonly string[] = []): void {
    this.changes.push({
      class: changeClass,
      operation: this.operation,
      ...(this.operationId === undefined ? {} : { operationId: this.operationId }),
      change,
      effect,
      affects: [...new Set(affects)],
      message: `${this.operation}: ${change} → ${effect}`,
    });
  }
}

/** The changes, breaking first, then dangerous, then safe; in document order within a class. */
export function byClass(changes: readonly Change[]): Change[] {
  return CLASSES.flatMap((changeClass) => changes.filter((change) => change.class === changeClass));
}

/** `a`, `b` and `c` as a list in a sentence, each in backticks. */
export function listed(values: Iterable<unknown>): string {
  return [...values].map((value) => `\`${String(value)}\``).join(', ');
}
