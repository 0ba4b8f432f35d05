"""Webhook events end to end: models, signatures, generation from the lake, delivery and a receiver.

Example:
    >>> from fdkit.webhooks import EVENT_TYPES
    >>> len(EVENT_TYPES)
    18
"""

from fdkit.webhooks.deliver import Destination, deliver, load_destinations
from fdkit.webhooks.events import API_VERSION, EVENT_TYPES, Event, make_event, parse_event
from fdkit.webhooks.generate import events_for_rows, events_from_lake
from fdkit.webhooks.receiver import Landing, create_receiver, read_landed
from fdkit.webhooks.signing import HEADER, SignatureError, sign, verify

__all__ = [
    "API_VERSION",
    "EVENT_TYPES",
    "Event",
    "make_event",
    "parse_event",
    "sign",
    "verify",
    "SignatureError",
    "HEADER",
    "events_from_lake",
    "events_for_rows",
    "Destination",
    "deliver",
    "load_destinations",
    "create_receiver",
    "Landing",
    "read_landed",
]
