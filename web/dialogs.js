// Dialogs and overlays shared by every view: Escape closes the topmost one (a native
// <dialog> open as modal or not, or an `.overlay` shown by un-hiding it), and focus goes
// back to where it was before it opened.

const opener = new WeakMap();

/** Opens `d` (a <dialog>) as a modal and remembers what had the focus. */
export function openDialog(d, focusEl) {
  opener.set(d, document.activeElement);
  if (typeof d.showModal === 'function') { if (!d.open) d.showModal(); } else d.setAttribute('open', '');
  (focusEl || d.querySelector('button, [href], input, select, [tabindex]'))?.focus();
}

/** Closes `d` (a <dialog> or an `.overlay`) and gives the focus back. */
export function closeDialog(d) {
  if (d.tagName === 'DIALOG') { if (d.open) d.close(); } else d.hidden = true;
  const back = opener.get(d);
  if (back && back.isConnected && typeof back.focus === 'function') back.focus();
}

/** Installs the Escape key: it closes the topmost open dialog or overlay. `onClose(el)`
 * runs after (for overlays with their own state). */
export function closeOnEscape(onClose) {
  document.addEventListener('keydown', (e) => {
    if (e.key !== 'Escape') return;
    const open = [...document.querySelectorAll('dialog[open], .overlay:not([hidden])')];
    const top = open[open.length - 1];
    if (!top) return;
    e.preventDefault();
    closeDialog(top);
    if (onClose) onClose(top);
  });
}
