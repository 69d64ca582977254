"""What the product reads and writes on disk by one set of rules: what a path the user typed names (`paths`), the
one writer that leaves every file whole or not there (`writes`), output files checked before any model runs
(`outputs`), and the versions a manifest records (`versions`)."""
