"""The root of every exception the fake provider raises: ``except FakeProviderError`` once.

Each class is defined next to the code that raises it, in the module named after it below.
A builtin in parentheses is a second base, kept so that callers catching it still do. The
underscored ones never leave their module; they are listed so that the tree is the whole
truth, which ``tests/test_errors.py`` checks.

FakeProviderError
  + FixtureError (ValueError)              fixtures: files are malformed; ``.problems``
  + EncodeError (ValueError)               wire: an attempt cannot be turned into bytes
  + PlaybackError (ValueError)             playback: an attempt cannot be played as written
  + NoScenarioSelectedError (ValueError)   playback: a request names no scenario; ``.status``
  + UnknownScenarioError (KeyError)        registry: no scenario has that id
  + RecordingError (ValueError)            recording: a response cannot become a fixture
  + ForwardingError (ValueError)           forwarding: an upstream or target not forwarded to
  + InvalidScenarioError (ValueError)      validating: a scenario's data fails validation
  + ContentCodingError (ValueError)        content_coding: a body does not decode as its coding says
  + _UnsafeShapeError                      fixtures: YAML too deep, cyclic or alias-bombed
  + _UnconvertibleNodeError                fixtures: a YAML value its tag cannot convert
  + _RequestRejectedError                  server: answered with an error, then closed
  + _BadRequestError                       proxy: a request the proxy cannot forward
  + _CouldNotListenError                   cli: a server cannot bind its address
  + _NotTakenError                         json_pieces: a body left to ``json.loads``
"""


class FakeProviderError(Exception):
    """Something the fake provider was given cannot be loaded, encoded, played or recorded."""
