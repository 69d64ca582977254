"""bench.columns: a table's header and rows from one list of columns, each value written in its column's width."""

from inspector.bench.columns import Column, header, line, median, percent, ratio


def test_header_and_row_line_up_as_written_by_hand():
    columns = [median("plain", "plain s", 9), Column("all/plain", 11, "all/plain", ratio),
               Column("stats +", 9, "stats_overhead", percent), Column("gradcam/plain", 15, "gradcam/plain", ratio),
               Column("keys", 6, "keys")]
    row = {"model": "resnet50", "median_s": {"plain": 0.1234}, "all/plain": 2.5, "stats_overhead": 0.125,
           "gradcam/plain": None, "keys": 42}
    assert header("model", 12, columns) == ("model       " "  plain s" "  all/plain" "  stats +" "  gradcam/plain"
                                             "  keys")
    assert line(row["model"], 12, columns, row) == ("resnet50    " "    0.123" "      2.50x" "    12.5%"
                                                    "              -" "    42")
