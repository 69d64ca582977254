"""Recording the graph of one forward: its records (`nodes`: Node, Edge, Group, Graph; torch-free), what a torch
function between modules is (`ops`), the groups of a module's other methods (`methods`), the recorder (`recorder`)
and `record_graph` (`entry`). Importing this package loads nothing; `entry` and `recorder` load torch."""
