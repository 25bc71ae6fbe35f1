"""Control characters: refused by the Python and the TensorFlow text path."""

import pytest
import tensorflow as tf

from keras_ordered import _tokens
from keras_ordered.export import text


@pytest.mark.parametrize(
    "character", ["\x00", "\x07", "\x0b", "\x0c", "\x1c", "\x1f", "\x7f", "\x85"]
)
def test_control_characters_are_refused_by_both_paths(character):
    sentence = f"A dog{character} ran"
    with pytest.raises(_tokens.ControlCharacterError, match=(
        rf"Sentence 2 has a control character \(U\+{ord(character):04X} at "
        "column 6\\)"
    )):
        text.tokenize_python(["ok", sentence])
    valid, message = text.check_sentences(tf.constant(["ok", sentence]))
    assert valid.numpy().tolist() == [True, False]
    assert message.numpy()[1].decode().startswith("control character")


def test_tab_newline_return_and_byte_order_mark():
    sentences = ["\ufeffThe\tcat\r\nsat", "a \u2028b"]
    assert text.tokenize_python(sentences) == [["The", "cat", "sat"], ["a", "b"]]
    valid, _ = text.check_sentences(tf.constant(sentences))
    assert valid.numpy().tolist() == [True, True]
