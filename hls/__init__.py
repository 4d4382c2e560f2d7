"""dpn-synth: affine C kernels to data-aware process networks and Verilog.

The pipeline is a chain of pure passes over documented IRs; see docs/architecture.md.
"""

__version__ = "0.1.0"
