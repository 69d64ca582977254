"""Object detectors as torchvision makes them: `[{"boxes", "labels", "scores", ...}]` per image, read as
detections (`outputs`), their score threshold (`thresholds`) and the score of one box as the objective
(`targets`). Duck-typed on that output, so any detector that answers in torchvision's form works."""
