"""Attribution > Evaluate…: its dialog (`dialog`), its window (`window`: the job's progress, the summary's table)
and the window's bar chart with the intervals (`chart`)."""
