"""The constrained numbers that the configs of every run kind share (pydantic ``Annotated`` types: a
field declares its default beside them, so each kind keeps its own defaults and its keys' order)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

PositiveFloat = Annotated[float, Field(gt=0, le=1e6, allow_inf_nan=False)]
DecayRate = Annotated[float, Field(ge=0, lt=1, allow_inf_nan=False)]  # momentum, Adam's β1 and β2: in [0, 1)
Epsilon = Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)]  # Adam's ε
WeightDecay = Annotated[float, Field(ge=0, le=10, allow_inf_nan=False)]
