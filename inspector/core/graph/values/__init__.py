"""Live data on the graph: the numbers of one run at every node (`numbers`: GraphValues, NodeValues; torch-free),
two runs compared node by node (`comparison`: GraphComparison; torch-free), the run that makes them (`run`,
`watch`) and the calls (`entry`: graph_values, compare_edits, compare_runs, compare_models). Importing this package
loads nothing; `entry`, `run` and `watch` load torch."""
