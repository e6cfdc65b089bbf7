"""Headless Chromium (Debian's `chromium` + `chromium-driver`) driven through selenium, for the viewer's tests.

One browser per test module; pages signal that they are drawn with `<html data-ready="PAGE">`, and the
tests wait for that attribute (a DOM signal), never for a fixed time.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

CHROMIUM = os.environ.get("TOOLMODE_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("TOOLMODE_CHROMEDRIVER", "/usr/bin/chromedriver")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--hide-scrollbars", "--lang=en-US"]


def missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not os.access(path, os.X_OK):
            return f"{path} is missing (apt-get install {package})"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    return None


class Browser:
    """A headless Chromium with a fresh profile; `close()` ends it and removes the profile."""

    def __init__(self, width: int = 1280, height: int = 900) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self.profile = tempfile.mkdtemp(prefix="toolmode-chromium-")
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in [*FLAGS, f"--user-data-dir={self.profile}"]:
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        try:
            self.driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        except BaseException:
            shutil.rmtree(self.profile, ignore_errors=True)
            raise
        self.driver.set_script_timeout(60)
        self.resize(width, height)

    def resize(self, width: int, height: int) -> None:
        """Make the page's viewport exactly width x height CSS pixels."""
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def open(self, url: str, page: str, timeout: float = 60) -> None:
        """Load `url` (or go to its #route) and wait until the page says `page` is drawn."""
        self.driver.get(url)
        self.wait_ready(page, timeout)

    def wait_ready(self, page: str, timeout: float = 60) -> None:
        """Wait for `<html data-ready=page>` (an error page fails at once with its message)."""
        from selenium.webdriver.support.ui import WebDriverWait

        def drawn(driver: Any) -> bool:
            state = driver.execute_script("return document.documentElement.dataset.ready || ''")
            if state == "error" and page != "error":
                raise AssertionError("the page shows an error: " + self.text("#app"))
            return state == page

        WebDriverWait(self.driver, timeout, poll_frequency=0.05).until(drawn)

    def js(self, script: str, *args: Any) -> Any:
        """Run `script` in the page and return its value."""
        return self.driver.execute_script(script, *args)

    def text(self, selector: str) -> str:
        """The textContent of the first element matching `selector` ("" if none)."""
        return self.js("const e = document.querySelector(arguments[0]); return e ? e.textContent : ''", selector)

    def texts(self, selector: str) -> list[str]:
        """The textContent of every element matching `selector`."""
        return self.js("return [...document.querySelectorAll(arguments[0])].map(e => e.textContent)", selector)

    def screenshot(self, path: Path, full_page: bool = False) -> Path:
        """A PNG of the viewport (or of the whole page, up to 8000 px tall)."""
        import base64

        params: dict[str, Any] = {"format": "png"}
        if full_page:
            size = self.js("return [document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
            params.update(captureBeyondViewport=True,
                          clip={"x": 0, "y": 0, "width": size[0], "height": min(size[1], 8000), "scale": 1})
        data = self.driver.execute_cdp_cmd("Page.captureScreenshot", params)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def console_errors(self) -> list[str]:
        """Messages the page logged at SEVERE level (CSP violations and script errors among them)."""
        return [e["message"] for e in self.driver.get_log("browser") if e.get("level") == "SEVERE"]

    def close(self) -> None:
        """End the browser and remove its profile."""
        try:
            self.driver.quit()
        finally:
            shutil.rmtree(self.profile, ignore_errors=True)
