"""Compiled expression loops: numba source generated per expression shape (codegen),
compiled and cached by source in memory and on disk (kernels), run over Arrow batches
with the general evaluator as the fallback (evaluate)."""
