"""Schemathesis against the server's own OpenAPI, over real HTTP: no 5xx, every response conforms.

The CI run draws a bounded number of cases per operation (``FDKIT_FUZZ_EXAMPLES``, default 25, i.e. about a
thousand cases over the 46 operations); the full run sets it higher.
"""

from __future__ import annotations

import os

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from fdkit.server.openapi import build_openapi

schema = schemathesis.openapi.from_dict(build_openapi())
EXAMPLES = int(os.environ.get("FDKIT_FUZZ_EXAMPLES", "25"))
CASES: list[int] = []


@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))  # fmt: skip
def test_api_conforms(case, ref_server):
    CASES.append(1)
    case.call_and_validate(
        base_url=ref_server.base_url,
        headers={"X-API-KEY": ref_server.api_key},
        checks=[not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance],
        timeout=30,
    )


def test_zz_fuzz_case_count():
    """Runs after the fuzz cases (file order): report and bound how many ran."""
    print(f"schemathesis cases run: {len(CASES)}")
    if CASES:
        assert len(CASES) >= 200
