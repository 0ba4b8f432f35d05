"""The ``/docs`` and ``/redoc`` pages (Swagger UI, ReDoc) from assets installed with fdkit, and the index at ``/``.

FastAPI's default pages load Swagger UI and ReDoc from a CDN (and ReDoc its fonts from Google): without a network
they stay blank. The pages here name only the server's own paths: the scripts, the stylesheet and the icon are the
files of the ``fastapi-offline`` distribution (Swagger UI 5 and ReDoc 2, which read OpenAPI 3.1), served under
:data:`DOCS_ASSETS_PATH` from memory, never from a remote host.

Example:
    >>> page = docs_page("/openapi.json", "Financial Data Service").body.decode()
    >>> DOCS_ASSETS_PATH + "/swagger-ui-bundle.js" in page and "https://" not in page
    True
    >>> docs_asset("swagger-ui.css").media_type, docs_asset("../secrets").status_code
    ('text/css', 404)
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from fdkit.wire.responses import error_response, json_response

__all__ = ["DOCS_ASSETS_PATH", "ASSETS", "docs_page", "redoc_page", "docs_asset", "index"]

#: where the page's assets are served
DOCS_ASSETS_PATH = "/docs/assets"
#: the assets the page loads: name -> media type (nothing else is ever served from the folder)
ASSETS = {
    "swagger-ui-bundle.js": "text/javascript",
    "swagger-ui.css": "text/css",
    "favicon.png": "image/png",
    "redoc.standalone.js": "text/javascript",
}
_PACKAGE = "fastapi_offline"  # the PyPI distribution fastapi-offline: Swagger UI's files in its static/ folder


def _asset_dir() -> Path | None:
    """The installed folder of the Swagger UI files (``None`` when the distribution is missing)."""
    spec = importlib.util.find_spec(_PACKAGE)  # found without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "static"
    return folder if folder.is_dir() else None


@functools.cache
def _asset_bytes(name: str) -> bytes | None:
    folder = _asset_dir()
    if folder is None or name not in ASSETS or not (folder / name).is_file():
        return None
    return (folder / name).read_bytes()


def docs_page(openapi_url: str, title: str) -> HTMLResponse:
    """The Swagger UI page of an OpenAPI document, loading its assets from this server.

    Args:
        openapi_url: the document's path on this server.
        title: the page's title.

    Returns:
        The HTML page (it names no other host: no validator badge either).

    Example:
        >>> "swagger-ui.css" in docs_page("/openapi.json", "x").body.decode()
        True
    """
    return get_swagger_ui_html(
        openapi_url=openapi_url,
        title=title,
        swagger_js_url=f"{DOCS_ASSETS_PATH}/swagger-ui-bundle.js",
        swagger_css_url=f"{DOCS_ASSETS_PATH}/swagger-ui.css",
        swagger_favicon_url=f"{DOCS_ASSETS_PATH}/favicon.png",
        swagger_ui_parameters={"validatorUrl": None},  # Swagger UI would ask validator.swagger.io otherwise
    )


def redoc_page(openapi_url: str, title: str) -> HTMLResponse:
    """The ReDoc page of an OpenAPI document, loading its script and icon from this server (no Google fonts).

    Args:
        openapi_url: the document's path on this server.
        title: the page's title.

    Returns:
        The HTML page (it names no other host).

    Example:
        >>> page = redoc_page("/openapi.json", "x").body.decode()
        >>> DOCS_ASSETS_PATH + "/redoc.standalone.js" in page and "https://" not in page
        True
    """
    return get_redoc_html(
        openapi_url=openapi_url,
        title=title,
        redoc_js_url=f"{DOCS_ASSETS_PATH}/redoc.standalone.js",
        redoc_favicon_url=f"{DOCS_ASSETS_PATH}/favicon.png",
        with_google_fonts=False,
    )


def index(accept: str, title: str, version: str) -> Response:
    """``GET /``: a browser is sent to the docs (307 to ``/docs``); any other client gets the service's links as JSON.

    Args:
        accept: the request's ``Accept`` header.
        title: the service's name.
        version: its version.

    Returns:
        The redirect, or ``{"name", "version", "docs", "redoc", "openapi"}`` (200).

    Example:
        >>> index("text/html,application/xhtml+xml", "x", "1").headers["location"]
        '/docs'
        >>> index("*/*", "x", "1").body
        b'{"name":"x","version":"1","docs":"/docs","redoc":"/redoc","openapi":"/openapi.json"}'
    """
    if "text/html" in accept.lower():
        return RedirectResponse("/docs", status_code=307)
    return json_response(
        {"name": title, "version": version, "docs": "/docs", "redoc": "/redoc", "openapi": "/openapi.json"}
    )


def docs_asset(name: str) -> Response:
    """One asset of the page (cached by browsers for a day); 404 for any other name.

    Args:
        name: a file name of :data:`ASSETS`.

    Returns:
        The file, or a 404 ``{"error", "message"}``.

    Example:
        >>> docs_asset("favicon.png").status_code
        200
    """
    body = _asset_bytes(name)
    if body is None:
        return error_response(404, "Not Found", f"no docs asset {name[:64]!r}")
    return Response(body, media_type=ASSETS[name], headers={"Cache-Control": "public, max-age=86400"})
