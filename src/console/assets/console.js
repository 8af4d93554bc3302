// The console's one script: "Copy" buttons, and the names of table columns on a phone. Everything
// works without JavaScript.
document.addEventListener('click', function (event) {
  var button = event.target.closest('button[data-copy]');
  if (!button) return;
  var field = document.getElementById(button.getAttribute('data-copy'));
  if (!field) return;
  field.select();
  var done = function () { button.textContent = 'Copied'; };
  if (navigator.clipboard) navigator.clipboard.writeText(field.value).then(done, function () { document.execCommand('copy'); done(); });
  else { document.execCommand('copy'); done(); }
});

// On a phone a table's rows are stacked cards (console.css), its header row hidden: each cell is
// given its column's name in data-label, which the stylesheet shows before the value. A header
// read only by screen readers (an "Actions" column) names nothing on screen.
function labelCells() {
  document.querySelectorAll('main table').forEach(function (table) {
    var names = Array.prototype.map.call(table.querySelectorAll('thead th'), function (th) {
      return th.querySelector('.sr-only') && th.textContent.trim() === th.querySelector('.sr-only').textContent.trim() ? '' : th.textContent.trim();
    });
    table.querySelectorAll('tbody tr').forEach(function (tr) {
      Array.prototype.forEach.call(tr.children, function (cell, i) {
        if (names[i] && !cell.hasAttribute('data-label')) cell.setAttribute('data-label', names[i]);
      });
    });
  });
}
if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', labelCells);
else labelCells();
