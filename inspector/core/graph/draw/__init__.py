"""A laid-out graph drawn (torch-free, Qt-free): how it looks (`look`), the shapes of each part (`parts`), the
figure (`figure`) written as SVG (`svg`) or PNG (`png`), and the numbers drawn on it: one run's values (`values`),
two runs compared (`compare`)."""
