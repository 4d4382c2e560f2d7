"""Random affine-program fuzzing of dpn-synth against gcc.

`generator` builds seeded random kernels (a small IR rendered to C), `check` runs one kernel through
dpn-synth (interpreter, DPN simulator, optionally RTL) and the gcc oracle and returns a verdict,
`shrink` reduces a failing kernel to a small one that fails the same way.
"""
