"""What the window remembers between launches (QSettings): model, input, device, ticks, layout."""

from __future__ import annotations

from inspector.core.workbench import ModelRequest


class SettingsMixin:
    """Part of MainWindow: restoring and saving its QSettings."""

    def restore_settings(self) -> None:
        s = self.settings
        geometry, state = s.value("window/geometry"), s.value("window/state")
        if geometry is not None:
            self.restoreGeometry(geometry)
        if state is not None:
            self.restoreState(state)
        self.device_combo.set_device(str(s.value("device", "cpu")))
        source = str(s.value("model/source", "demo"))
        weights = s.value("model/weights")
        saved_input = s.value("input")
        if saved_input:
            self.input_source = str(saved_input)
            if self.input_combo.findText(self.input_source) < 0:
                self.input_combo.addItem(self.input_source)
            self.input_combo.setCurrentIndex(self.input_combo.findText(self.input_source))
        trusted = s.value("model/trust", False) in (True, "true")
        self.load_model(ModelRequest(source, str(weights) if weights else None, trusted))

    def save_settings(self) -> None:
        s = self.settings
        s.setValue("window/geometry", self.saveGeometry())
        s.setValue("window/state", self.saveState())
        s.setValue("device", self.device_combo.device())
        s.setValue("model/source", self.model_request.source)
        s.setValue("model/weights", self.model_request.weights or "")
        s.setValue("model/trust", self.model_request.trust)
        s.setValue("input", self.input_source)
        s.sync()

