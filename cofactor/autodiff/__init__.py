"""Automatic differentiation with Enzyme: JAX-style transforms, Enzyme-style activities, and
custom derivative rules."""
