"""Attribution maps: which parts of the input a model's answer depends on.

One module per method or family, each holding its arithmetic and the entry the method table names
(`records.methods`: a row per method, read by the CLI, the app, sessions and exports):

- `gradients`: saliency, guided backprop and guided Grad-CAM (engine runs with hooks);
- `cams/`: Grad-CAM with the layer rule (`cams.layers`) and EigenCAM;
- `rollout`: attention rollout;
- `integrated`, `smoothgrad` (over `smooth`'s noisy copies), `occlusion`, `drise`: methods that run in passes;
- `per_box`: a detector's boxes explained one at a time.

Under them, `scores/` holds the baselines and the deletion and insertion scores, `passes/` the one door for
speed-ups (how many copies a pass takes, the CPU's layout, occlusion's regions), and `record` the Attribution
every method returns. `entry.attribute` is the one way in: it checks the options against the table, makes a
named baseline, runs the row's function and says the map's sign.
"""

from __future__ import annotations

from .cams.gradcam import cam_from_result, gradcam
from .entry import attribute, check_options, method_row, takes_baseline, with_baseline
from .gradients import guided_backprop, guided_gradcam, saliency
from .passes.batching import parse_memory
from .record import Attribution
from .rollout import attention_rollout

__all__ = ["Attribution", "attention_rollout", "attribute", "cam_from_result", "check_options", "gradcam",
           "guided_backprop", "guided_gradcam", "method_row", "parse_memory", "saliency", "takes_baseline",
           "with_baseline"]
