"""The parse page of `keras-ordered serve` in a real browser: headless
Chromium (Debian's `chromium` and `chromium-driver`) driven by Selenium
types two sentences, submits, and reads the drawn trees back.

Run as a script, it makes the screenshot of docs/serving.md:

    python tests/cli/test_serve_page.py docs/images/serve_page.png
"""

import os
import re
import shutil
import subprocess
import sys
import urllib.parse
import xml.etree.ElementTree as ElementTree

import pytest

def _serving_client():
    """tests/serving_client.py, loaded by its path: this file also runs as
    a script (the screenshot's command), where tests/ is not importable."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "serving_client.py")
    spec = importlib.util.spec_from_file_location("serving_client", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ServeProcess = _serving_client().ServeProcess

pytestmark = pytest.mark.slow

SENTENCES = ["The cat sat on the mat.", "Stocks fell on Friday ."]


def _browser_paths():
    """`(chromium, chromedriver)`, or None where either is missing."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


def _driver(width=1100, height=1400):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    browser, driver = _browser_paths()
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", f"--window-size={width},{height}"):
        options.add_argument(argument)
    return webdriver.Chrome(service=Service(executable_path=driver),
                            options=options)


def _svg_words(src):
    """The leaves of a drawn tree, left to right: the `<text>` elements of
    the SVG's lowest row of text."""
    prefix = "data:image/svg+xml;charset=utf-8,"
    assert src.startswith(prefix), src[:80]
    svg = urllib.parse.unquote(src[len(prefix):])
    root = ElementTree.fromstring(svg)
    texts = []

    def number(value):
        return float(re.sub(r"[^0-9.\-e]", "", value or "0") or 0)

    def walk(node, left, width, top):
        # svgling nests one <svg> per node, its x and width in % of its
        # parent's, its y in pixels below its parent's top.
        for child in node:
            tag = child.tag.split("}")[-1]
            if tag == "svg" and "%" in (child.get("width") or ""):
                x = child.get("x") or "0"
                offset = number(x) / 100 * width if "%" in x else 0.0
                walk(child, left + offset,
                     width * number(child.get("width")) / 100,
                     top + number(child.get("y")))
            elif tag == "svg":
                walk(child, left, width, top)
            elif tag == "text" and (child.text or "").strip():
                texts.append((round(top + number(child.get("y")), 1),
                              left + width * number(child.get("x")) / 100,
                              child.text.strip()))

    walk(root, 0.0, 1.0, 0.0)
    lowest = max(y for y, _, _ in texts)
    return [word for y, x, word in sorted(texts, key=lambda t: t[1])
            if y == lowest]


def fill_and_submit(driver, url, sentences, models=None):
    """Opens the page, types `sentences` (one per line), ticks `models`
    (None: the one ticked), submits, and waits for the trees."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(url)
    wait = WebDriverWait(driver, 120)
    wait.until(EC.presence_of_element_located(
        (By.CSS_SELECTOR, "input[name=model]")))
    if models is not None:
        for box in driver.find_elements(By.CSS_SELECTOR, "input[name=model]"):
            if box.is_selected() != (box.get_attribute("value") in models):
                box.click()
    text = driver.find_element(By.ID, "sentences")
    text.clear()
    text.send_keys("\n".join(sentences))
    driver.find_element(By.ID, "parse-button").click()
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR,
                                             "article.sentence")) == len(sentences)
               or d.find_element(By.ID, "error").is_displayed())
    error = driver.find_element(By.ID, "error")
    assert not error.is_displayed(), error.text
    return driver.find_elements(By.CSS_SELECTOR, "article.sentence")


@pytest.fixture(scope="module")
def browser():
    if _browser_paths() is None:
        pytest.skip("no Chromium: apt-get install chromium chromium-driver")
    pytest.importorskip("selenium", reason="no selenium: pip install selenium")
    pytest.importorskip("aiohttp")
    driver = _driver()
    yield driver
    driver.quit()


def _parse_command(sentences):
    import command_server

    done = subprocess.run(command_server.argv(["keras-ordered", "parse",
                                               *sentences]),
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_page_draws_the_trees_of_parse(browser):
    from selenium.webdriver.common.by import By

    expected = _parse_command(SENTENCES)
    with ServeProcess(["--model", "prpn_ptb_quick", "--model",
                       "onlstm_ptb_small"]) as server:
        articles = fill_and_submit(browser, server.url, SENTENCES)
        tokens = [["The", "cat", "sat", "on", "the", "mat", "."],
                  ["Stocks", "fell", "on", "Friday", "."]]
        for article, words, tree in zip(articles, tokens, expected):
            image = article.find_element(By.CSS_SELECTOR, "img.tree")
            assert _svg_words(image.get_attribute("src")) == words
            assert image.get_property("naturalWidth") > 0  # it rendered
            brackets = article.find_element(By.CSS_SELECTOR, ".brackets code")
            assert brackets.text == tree
        # Both models: one averaged tree, each constituent with its votes.
        (article,) = fill_and_submit(
            browser, server.url, SENTENCES[:1],
            models=["prpn_ptb_quick", "onlstm_ptb_small"])
        assert "Averaged over 2 models" in article.text
        src = article.find_element(By.CSS_SELECTOR, "img.tree").get_attribute("src")
        assert "2%2F2" in src or "2/2" in urllib.parse.unquote(src)
        # A bad line is shown as the server's one-line error.
        browser.find_element(By.ID, "sentences").clear()
        browser.find_element(By.ID, "parse-button").click()
        error = browser.find_element(By.ID, "error")
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(browser, 30).until(lambda d: error.is_displayed())
        assert "empty" in error.text


def screenshot(path):
    """Writes a screenshot of the page with two parsed sentences to `path`."""
    with ServeProcess(["--model", "prpn_ptb_quick", "--model",
                       "onlstm_ptb_small"]) as server:
        driver = _driver(width=900, height=1000)
        try:
            fill_and_submit(driver, server.url, SENTENCES)
            driver.save_screenshot(path)
        finally:
            driver.quit()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python tests/cli/test_serve_page.py OUTPUT.png")
    screenshot(sys.argv[1])
    print(sys.argv[1])
