"""A run's target: as the user writes it (`text`: `top1`, a class index, `seg:...`, `box:...`) and the scalar
that backward starts from (`objective`)."""
