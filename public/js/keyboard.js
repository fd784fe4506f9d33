/**
 * Single-key shortcuts for the common path. Ignored while typing in a field (Escape leaves the
 * field) and when a modifier is held, so browser and OS shortcuts keep working.
 */
export const SHORTCUTS = [
  ['j', 'Next request'],
  ['k', 'Previous request'],
  ['a', 'Approve (or submit answers)'],
  ['d', 'Deny (or decline)'],
  ['f', 'Write feedback'],
  ['p', 'Pending list'],
  ['h', 'History'],
  ['/', 'Search history'],
  ['Esc', 'Leave a field, close help, back to the list'],
  ['?', 'Show this help'],
];

export function installShortcuts(actions) {
  document.addEventListener('keydown', (e) => {
    // A held key repeats: one press is one action, never a run of decisions.
    if (e.defaultPrevented || e.repeat || e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return;
    const target = e.target;
    if (target instanceof Element && target.closest('input, textarea, select, [contenteditable="true"]')) {
      if (e.key === 'Escape') target.blur();
      return;
    }
    if (document.querySelector('dialog[open]') && e.key !== '?' && e.key !== 'Escape') return;
    const action = actions[e.key];
    if (!action) return;
    e.preventDefault();
    action();
  });
}
