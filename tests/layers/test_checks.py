"""The layers' shared argument checks (`keras_ordered.layers._checks`)."""

import pytest

from keras_ordered.layers import BahdanauAttention
from keras_ordered.layers import LeftDependentLSTM
from keras_ordered.layers import TopDownTreeLSTM
from keras_ordered.layers._checks import check_positive_int


@pytest.mark.parametrize("value", [1, 7, 10**9])
def test_check_positive_int_accepts(value):
    assert check_positive_int("units", value) == value


@pytest.mark.parametrize("value", [0, -3, 2.5, "4", True, None])
def test_check_positive_int_refuses(value):
    with pytest.raises(ValueError) as error:
        check_positive_int("units", value)
    assert str(error.value) == (
        f"`units` must be a positive integer. Received: units={value!r}"
    )


@pytest.mark.parametrize("layer", [BahdanauAttention, LeftDependentLSTM,
                                   TopDownTreeLSTM])
@pytest.mark.parametrize("units", [0, True, 3.0])
def test_layers_refuse_a_bad_units(layer, units):
    with pytest.raises(ValueError, match=r"`units` must be a positive integer"):
        layer(units=units)
