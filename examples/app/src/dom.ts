/** Building the page: elements from a tag, attributes and children; no framework needed at this size. */

type Child = Node | string | null | undefined | false;

/** An element with its attributes (`on…` functions become listeners) and children. */
export function h<Tag extends keyof HTMLElementTagNameMap>(
  tag: Tag,
  attributes: Record<string, string | number | boolean | ((event: Event) => void)> = {},
  ...children: Child[]
): HTMLElementTagNameMap[Tag] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (typeof value === 'function') element.addEventListener(name.slice(2), value);
    else if (value === true) element.setAttribute(name, '');
    else if (value !== false) element.setAttribute(name, String(value));
  }
  for (const child of children) if (child !== null && child !== undefined && child !== false) element.append(child);
  return element;
}

/** The failures of an answer as sentences, in a region screen readers announce. */
export function alert(lines: readonly string[]): HTMLElement {
  return h('div', { role: 'alert', class: 'alert' }, ...lines.map((line) => h('p', {}, line)));
}
