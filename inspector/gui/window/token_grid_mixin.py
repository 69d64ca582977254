"""Part of MainWindow: the patch grid token captures are drawn on, and View > Token grid… to override it."""

from __future__ import annotations


class TokenGridMixin:
    """Part of MainWindow: the model's token grid, or the user's override, given to every panel."""

    def set_token_grid(self, grid) -> None:
        """The patch grid token captures are drawn on (the model's, or the user's override)."""
        self.token_grid = grid
        for panel in (self.activation_panel, self.gradient_panel):
            panel.set_tokens(grid)
        self.views.compare.grid.tokens = grid

    def set_layouts(self, layouts) -> None:
        """The model's word on which layers' 4-D outputs are channels-last, given to every panel."""
        for panel in (self.activation_panel, self.gradient_panel):
            panel.set_layouts(layouts)
        self.views.compare.grid.layouts = layouts

    def ask_token_grid(self) -> None:
        """View > Token grid…: override the grid the model gives (or give one it does not)."""
        from PySide6.QtWidgets import QInputDialog

        from inspector.core.common.errors import SpecError
        from inspector.core.records.tokens import parse_grid

        grid = self.token_grid
        shown = f"{grid.height}x{grid.width}+{grid.prefix}" if grid else ""
        text, ok = QInputDialog.getText(self, "Token grid", "Patch grid of token captures, HxW+prefix tokens "
                                        "(empty: none):", text=shown)
        if not ok:
            return
        try:
            self.set_token_grid(parse_grid(text) if text.strip() else None)
        except SpecError as exc:
            self.state.notify("error", str(exc))
            return
        self.show_layer()
