"""A reply that is not a chat completion is reported as what came back: status, content type, a snippet.

Proxies answer `<html>502 Bad Gateway</html>` with status 200; some servers stream garbage. The error the
user reads says so (escaped, cut short), streamed or not, instead of a JSON decode error or "a cut stream".
"""

from __future__ import annotations

import pytest

from toolmode.models import ModelClient, ModelError
from toolmode.testing import fault

USER = [{"role": "user", "content": "hi"}]
HTML = "<html>502 Bad Gateway</html>"


def fails_with(server, *, stream: bool) -> str:
    """The one-line error of a request that gets the scripted body (deadline 0.3 s: no second attempt)."""
    model = ModelClient("m", base_url=server.base_url, stream=stream, deadline=0.3)
    with pytest.raises(ModelError) as info:
        model.chat(USER)
    model.close()
    assert len(server.requests) == 1
    return str(info.value)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_an_html_page_is_quoted_with_its_status_and_type(scripted, stream: bool) -> None:
    text = fails_with(scripted([fault("bad_body", body=HTML, content_type="text/html")]), stream=stream)
    assert f"HTTP 200, text/html, 28 bytes: '{HTML}'" in text
    assert "malformed reply from the server" in text
    assert ("expected an event stream" in text) is stream
    assert "Expecting value" not in text and "stream ended" not in text


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_the_snippet_is_escaped_and_cut(scripted, stream: bool) -> None:
    body = "\x1b[31mnot json\x1b[0m\n" + "x" * 500
    text = fails_with(scripted([fault("bad_body", body=body, content_type="text/plain")]), stream=stream)
    assert "'\\x1b[31mnot json\\x1b[0m xxx" in text and "\x1b" not in text
    assert "x" * 180 + "…'" in text and "x" * 300 not in text
    assert "\n" not in text


def test_a_stream_event_that_is_not_json_is_quoted(scripted) -> None:
    body = 'data: {"choices": []}\n\ndata: <b>oops</b>\n\n'
    text = fails_with(scripted([fault("bad_body", body=body, content_type="text/event-stream")]), stream=True)
    assert "malformed event in the stream: '<b>oops</b>'" in text


def test_an_error_sent_inside_a_stream_is_quoted(scripted) -> None:
    body = 'data: {"error": {"message": "model overloaded, try later"}}\n\n'
    text = fails_with(scripted([fault("bad_body", body=body, content_type="text/event-stream")]), stream=True)
    assert "the server sent an error in the stream: 'model overloaded, try later'" in text


def test_a_stream_without_a_finish_says_how_far_it_got(scripted) -> None:
    body = 'data: {"choices": [{"index": 0, "delta": {"content": "half"}}]}\n\ndata: [DONE]\n\n'
    text = fails_with(scripted([fault("bad_body", body=body, content_type="text/event-stream")]), stream=True)
    assert "the stream ended before the reply was complete (1 event read)" in text
