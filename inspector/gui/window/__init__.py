"""The main window and what it is made of: its layout, menus, toolbar choosers, status bar, file dialogs, the
module tree's menu, and the habits of a window that answers (first paint, work over turns, garbage collection)."""
