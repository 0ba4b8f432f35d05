"""Schemathesis against the server's own OpenAPI, over real HTTP: no 5xx, every response conforms.

One pytest test per operation (its own node id, so pytest-xdist spreads them over workers and none is lost), each
drawing up to ``FDKIT_FUZZ_EXAMPLES`` cases (default 100, about 3,500 over the 46 operations; the full run sets
it higher).
"""

from __future__ import annotations

import os

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from fdkit.server.app import contract_from_env
from fdkit.server.openapi import build_openapi

schema = schemathesis.openapi.from_dict(build_openapi(contract=contract_from_env()))  # (ref_server's contract)
OPERATIONS = [result.ok() for result in schema.get_all_operations()]
EXAMPLES = int(os.environ.get("FDKIT_FUZZ_EXAMPLES", "100"))


def test_every_catalog_operation_is_fuzzed():
    from fdkit.catalog.endpoints import CATALOG

    assert len(OPERATIONS) == len(CATALOG) == len({op.label for op in OPERATIONS})


@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda op: op.label)
def test_api_conforms(operation, ref_server):
    seen: list[int] = []

    @given(case=operation.as_strategy())
    @settings(
        max_examples=EXAMPLES, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
    )
    def run(case):
        seen.append(1)
        case.call_and_validate(
            base_url=ref_server.base_url,
            headers={"X-API-KEY": ref_server.api_key},
            checks=[
                not_a_server_error,
                status_code_conformance,
                content_type_conformance,
                response_schema_conformance,
            ],
            timeout=30,
        )

    run()
    print(f"{operation.label}: {len(seen)} cases")
    # an operation with parameters has several possible requests (at least four: one optional three-value enum,
    # /filings/items/types); one without has exactly one
    assert len(seen) >= (min(EXAMPLES, 4) if operation.query or operation.body else 1), len(seen)
