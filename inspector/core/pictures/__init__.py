"""Pictures made from numbers, numpy only: channels tiled into a mosaic (`mosaic`), colour ranges that a few
extreme values do not wash out (`clipping`), a segmentation's classes coloured over the input (`segmentation`),
a picture drawn larger than the map it lies under (`fit`)."""
