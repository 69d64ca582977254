"""Issue 54, item 1: the set-up the atlas's and the concepts' benchmarks share (`bench/folder_jobs`): the generated
folder (JPEGs in two class folders), its files decoded in batches as the folder jobs read them, the plain forward
pass both are measured against, and the work folder gone afterwards."""

from __future__ import annotations

from inspector.bench.folder_jobs import bench_folder, load_on


def test_the_bench_folder_of_the_demo():
    loaded, dev = load_on("demo", "cpu")
    assert str(dev) == "cpu" and next(loaded.module.parameters()).device.type == "cpu"
    with bench_folder(loaded, dev, 5, "folder-jobs-bench-") as folder:
        work = folder.work
        assert work.name.startswith("folder-jobs-bench-") and folder.data == work / "data"
        assert sorted(p.parent.name for p in map(folder.data.joinpath, folder.files)) == ["class0"] * 3 + ["class1"] * 2
        shapes = [tuple(x.shape) for x in folder.batches(2)]
        assert shapes == [(2, 3, 64, 64), (2, 3, 64, 64), (1, 3, 64, 64)]  # the demo's 64x64 input, every image
        assert [tuple(x.shape) for x in folder.batches(1, folder.files[:1])] == [(1, 3, 64, 64)]
        folder.plain(2)  # the yardstick runs on what the batches give
    assert not work.exists()
