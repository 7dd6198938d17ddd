"""Custom derivative rules for users' functions (the mechanism is tracing/derivatives.py)."""
from __future__ import annotations

from ..convert.calls import converted
from ..tracing import context, derivatives


class custom_jvp(derivatives.custom_jvp):
    """``fn`` differentiated with a forward-mode rule instead of through its body, as JAX's
    ``custom_jvp``; reverse mode transposes the rule, which must be linear in the tangents::

        @cf.custom_jvp
        def f(x): ...
        @f.defjvp
        def f_jvp(primals, tangents): return f(*primals), <tangent of f>
    """

    def _callables(self):
        if not context.is_tracing():
            return self.fn, self.rule
        return converted(self.fn), self.rule and converted(self.rule)


stop_gradient = derivatives.stop_gradient
