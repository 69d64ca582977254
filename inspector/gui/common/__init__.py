"""What every part of the window uses and nothing of the window's own: file dialogs with a memory, a notice for the
banner, progress in words, work over event-loop turns, the first paint, garbage collection on the GUI thread,
Qt's messages filtered, and the toolbar's choosers' search."""
