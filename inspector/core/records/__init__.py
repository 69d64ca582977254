"""Plain, frozen records that cross threads and processes as they are: what the app asks the worker
for (`requests`), what goes wrong (`failure`), a capture's statistics (`stats`), a patch grid
(`tokens`). Torch-free and Qt-free (numpy at most), so the window uses them before the engine loads."""
