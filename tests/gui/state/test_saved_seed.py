"""The seed of random weights set in the settings is the one the model loads with, 0 included (set as a number,
as the screenshot tools set it, 0 was read as no seed: the model came with other random weights)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings

from inspector.gui.state.settings import SettingsStore


@pytest.mark.parametrize(("kept", "seed"), [(0, 0), (7, 7), ("0", 0), ("", None)])
def test_the_saved_seed_comes_back(tmp_path, kept, seed):
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat)
    settings.setValue("model/source", "timm:vit_tiny_patch16_224")
    settings.setValue("model/weights", "random")
    settings.setValue("model/seed", kept)
    settings.sync()
    for store in (settings, QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat)):  # as set; read from the file
        request = SettingsStore(store).saved_request()
        assert (request.source, request.weights, request.seed) == ("timm:vit_tiny_patch16_224", "random", seed)
