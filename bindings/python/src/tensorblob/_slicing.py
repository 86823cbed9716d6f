"""get_slice indexing with safetensors 0.8.0's rules (not numpy's), so code written against
safetensors accepts and refuses the same keys, with the same exception classes:

- a key is an int (anything with __index__ that fits int64), a slice with non-negative start
  and stop and a positive step, or one Ellipsis; a bare empty list means [0:0]; anything else
  (None, floats, non-empty lists, lists inside a tuple) is refused with SafetensorError;
- a negative start/stop raises OverflowError, one past 2**64 too (safetensors converts them
  to unsigned), a step outside int64 too; a non-integer bound or step raises TypeError; a
  negative int index counts from the end of its dimension;
- more indices than dimensions, an int index past the end, a slice start at or past the end
  (also ``[:]`` of an empty dimension) or a stop past the end raise SafetensorError (numpy
  would clip: ``[:20]`` of 10 rows is refused here);
- a start past its stop raises ReversedSliceError, a SystemError, ValueError and
  SafetensorError at once: safetensors raises SystemError for step 1, numpy's ValueError for
  most larger steps and panics for others (a safetensors bug not copied).
Checks run in the order safetensors runs them: the ellipsis count, each index converted in
turn (a negative int checked against its dimension then), the count of indices, the bounds,
then start <= stop.
"""
from __future__ import annotations

import operator
from typing import Any, List, Sequence, Tuple, Union

from ._errors import ReversedSliceError, SafetensorError

_I64 = 1 << 63
_U64 = 1 << 64


def _unsigned(v: Any) -> int:
    n = operator.index(v)
    if n < 0:
        raise OverflowError("can't convert negative int to unsigned")
    if n >= _U64:
        raise OverflowError("int too big to convert")
    return n


_Item = Union[int, Tuple[int, Any, int], None]  # int, (start, stop|None, step), None=Ellipsis


def normalize(key: Any, shape: Sequence[int]) -> Tuple[Any, ...]:
    """The numpy key equal to safetensors' reading of `key` over `shape`, or the exception
    safetensors raises for it."""
    if isinstance(key, list):
        if key:
            raise SafetensorError("Non empty lists are not implemented")
        key = slice(0, 0)
    items = key if isinstance(key, tuple) else (key,)
    ndim = len(shape)
    conv: List[_Item] = []
    if sum(1 for k in items if k is Ellipsis) > 1:  # checked before any index is converted
        raise SafetensorError("Only one ellipsis (...) is allowed in slice index")
    ellipsis_at = -1
    for pos, k in enumerate(items):
        if k is Ellipsis:
            ellipsis_at = pos
            conv.append(None)
        elif isinstance(k, slice):
            start = 0 if k.start is None else _unsigned(k.start)
            stop = None if k.stop is None else _unsigned(k.stop)
            step = 1 if k.step is None else operator.index(k.step)
            if not -_I64 <= step < _I64:  # safetensors reads the step as a signed 64-bit int
                raise OverflowError("Python int too large to convert to C long")
            if step <= 0:
                raise SafetensorError(f"Slice step must be a positive integer, got {step}")
            conv.append((start, stop, step))
        else:
            try:
                n = operator.index(k)
            except TypeError:
                n = None
            if n is None or not -_I64 <= n < _I64:
                raise SafetensorError(f"Unsupported slice index at position {pos}: expected "
                                      f"slice, int, or ellipsis")
            if n < 0:  # from the end of its dimension: the ellipsis covers max(0, the rest)
                dim = pos if ellipsis_at < 0 else pos - 1 + max(0, ndim - (len(items) - 1))
                size = shape[dim] if 0 <= dim < ndim else 0
                if -n > size:
                    raise SafetensorError(f"Invalid index {n} for dimension {dim} of size {size}")
                n += size
            conv.append(n)
    real = conv
    if ellipsis_at >= 0:  # the ellipsis stands for every dimension the others leave
        fill: List[_Item] = [(0, None, 1)] * max(0, ndim - (len(conv) - 1))
        real = conv[:ellipsis_at] + fill + conv[ellipsis_at + 1:]
    if len(real) > ndim:
        raise SafetensorError(f"more slicing indexes than dimensions for shape {list(shape)}")
    out: List[Any] = []
    backwards = False
    for d, c in enumerate(real):
        size = shape[d]
        if isinstance(c, int):
            if c >= size:
                raise SafetensorError(f"index {c} out of bounds for dimension {d} of size {size}")
            out.append(c)
            continue
        start, stop, step = c  # type: ignore[misc]
        if start >= size:
            raise SafetensorError(f"index {start} out of bounds for dimension {d} of size {size}")
        if stop is None:
            stop = size
        elif stop > size:
            raise SafetensorError(f"index {stop - 1} out of bounds for dimension {d} of size {size}")
        backwards = backwards or start > stop
        out.append(slice(start, stop, step))
    if backwards:
        raise ReversedSliceError("a slice starts after its stop (safetensors raises SystemError, "
                                 "ValueError or panics here)")
    return tuple(out)
