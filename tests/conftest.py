import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Two cores: torch's intra-op threads fighting the app's worker thread (and parallel CLI
# subprocesses) made single runs many times slower. One thread each is faster overall.
os.environ.setdefault("OMP_NUM_THREADS", "1")
