"""Data frames read and written without websockets' per-frame objects: the hot path's bypass.

The one place the server goes around websockets (DESIGN.md, principle 13).
A move costs the server one incoming frame and two or three outgoing ones,
and websockets builds, checks and serializes a ``Frame`` object for each,
through a generator parser on the way in and a ``BytesIO`` on the way out:
together the largest Python cost of a move after the referee. The frames a
move needs are simple, so this module reads and writes those itself and
leaves every other frame to websockets.

Out: a server's frame is unmasked, so a whole text frame is two, four or
ten header bytes before the payload (``text_frame``), made once per message
object (a broadcast frames once) while ``writes_directly`` holds: the
connection is open, no extension was negotiated (the listener offers none:
permessage-deflate would change the bytes) and no fragmented message is
being sent.

In: ``frame_span`` finds where each incoming frame ends, so websockets is
always handed whole frames, or the rest of the one it is reading, and its
parser stands at a frame boundary whenever this module looks.
``plain_payload`` unmasks a frame that websockets would pass on unchanged
and that changes none of its state: final, text or binary, masked, no
reserved bits, within the size limit, and no fragmented message open.
Control frames, fragments, oversize or malformed frames, and anything after
a close go to websockets, which answers and fails them as before.

tests/arena/test_data_frames.py holds both directions equal to websockets
itself, for the websockets range pyproject.toml pins.
"""

from __future__ import annotations

import struct

from websockets.protocol import State
from websockets.server import ServerProtocol

try:  # the C helper websockets' own frames use, where it was built
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover
    from websockets.utils import apply_mask

_FIN_TEXT, _FIN_BINARY = 0x81, 0x82
_LENGTH_16 = struct.Struct("!BBH")
_LENGTH_64 = struct.Struct("!BBQ")


def text_frame(payload: bytes) -> bytes:
    """A final, unmasked text frame carrying ``payload`` (UTF-8), as RFC 6455 lays it out."""
    length = len(payload)
    if length < 126:
        return bytes((_FIN_TEXT, length)) + payload
    if length < 65536:
        return _LENGTH_16.pack(_FIN_TEXT, 126, length) + payload
    return _LENGTH_64.pack(_FIN_TEXT, 127, length) + payload


def text_payload(frame: bytes) -> bytes:
    """The payload of a frame ``text_frame`` made (for a connection that cannot take it whole)."""
    marker = frame[1]
    return frame[2 if marker < 126 else 4 if marker == 126 else 10 :]


def writes_directly(protocol: ServerProtocol) -> bool:
    """True when frames from ``text_frame`` may go straight to the socket for ``protocol``."""
    return (
        protocol.state is State.OPEN
        and not protocol.extensions
        and not protocol.expect_continuation_frame
    )


def frame_span(data: bytes, offset: int) -> tuple[int, int] | None:
    """The header and payload lengths of the frame at ``offset``; None while its header is
    not all in ``data``."""
    available = len(data) - offset
    if available < 2:
        return None
    second = data[offset + 1]
    length, header = second & 0x7F, 6 if second & 0x80 else 2
    if length == 126:
        header += 2
        if available < header:
            return None
        length = int.from_bytes(data[offset + 2 : offset + 4])
    elif length == 127:
        header += 8
        if available < header:
            return None
        length = int.from_bytes(data[offset + 2 : offset + 10])
    elif available < header:
        return None
    return header, length


def plain_payload(
    data: bytes, offset: int, header: int, end: int, protocol: ServerProtocol
) -> bytes | None:
    """The unmasked payload of the whole frame ``data[offset:end]`` if it is a plain message
    (see the module docstring) for ``protocol``, whose connection the caller found open;
    None: websockets reads it."""
    first = data[offset]
    if (
        (first != _FIN_TEXT and first != _FIN_BINARY)
        or header == 2  # unmasked: a client must mask
        or protocol.current_size is not None  # a fragmented message is open
        or protocol.extensions
    ):
        return None
    limit = protocol.max_message_size
    if limit is not None and end - offset - header > limit:
        return None
    mask_at = offset + header - 4
    return apply_mask(data[mask_at + 4 : end], data[mask_at : mask_at + 4])
