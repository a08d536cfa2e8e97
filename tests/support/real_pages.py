"""Real pages nobody here wrote, for the browser tests and the benchmark: Python's documentation as Debian
ships it (python3.11-doc), and Django's admin (Django from PyPI) over a small generated shop project with a
few hundred rows, served by `manage.py runserver` on 127.0.0.1. And the ground truth of what a page shows:
Chromium's own accessibility tree over CDP, the interactive nodes that are not ignored, are rendered and
meet the viewport.
"""
from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

PYTHON_DOCS = Path("/usr/share/doc/python3.11/html")
PYTHON_DOC_PAGES = ("tutorial/controlflow.html", "library/stdtypes.html", "library/index.html", "index.html")
DJANGO_USER, DJANGO_PASSWORD = "admin", "lookout-admin-pw"
CONTROL_ROLES = frozenset({"link", "button", "textbox", "searchbox", "checkbox", "radio", "switch", "combobox",
                           "listbox", "slider", "spinbutton", "tab", "menuitem", "menuitemcheckbox",
                           "menuitemradio"})  # fmt: skip
FIELD_ROLES = frozenset({"Date", "DateTime", "InputTime", "ColorWell"})
"""Chromium's roles of form fields whose parts (a date field's picker button) are controls of their own in its
tree but one field to an agent (and to Playwright)."""
_LINE = re.compile(r'^\s*- (?P<role>[a-z]+)(?: (?P<name>"(?:[^"\\]|\\.)*"))?(?P<rest>.*)$')


def python_docs() -> Path:
    """The root of Debian's Python documentation (`make system-deps` installs python3.11-doc)."""
    if not (PYTHON_DOCS / "index.html").is_file():
        raise RuntimeError(f"{PYTHON_DOCS} is missing: run `make system-deps` (Debian's python3.11-doc)")
    return PYTHON_DOCS


_SETTINGS = """
SECRET_KEY = "lookout-tests-only"
DEBUG = True
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = ["django.contrib.admin", "django.contrib.auth", "django.contrib.contenttypes",
                  "django.contrib.sessions", "django.contrib.messages", "django.contrib.staticfiles", "shop"]
MIDDLEWARE = ["django.middleware.security.SecurityMiddleware", "django.contrib.sessions.middleware.SessionMiddleware",
              "django.middleware.common.CommonMiddleware", "django.middleware.csrf.CsrfViewMiddleware",
              "django.contrib.auth.middleware.AuthenticationMiddleware",
              "django.contrib.messages.middleware.MessageMiddleware"]
ROOT_URLCONF = "site_urls"
TEMPLATES = [{"BACKEND": "django.template.backends.django.DjangoTemplates", "APP_DIRS": True, "OPTIONS": {
    "context_processors": ["django.template.context_processors.request", "django.contrib.auth.context_processors.auth",
                           "django.contrib.messages.context_processors.messages"]}}]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": "db.sqlite3"}}
STATIC_URL = "static/"
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
"""
_URLS = """
from django.contrib import admin
from django.urls import path
urlpatterns = [path("admin/", admin.site.urls)]
"""
_MODELS = """
from django.db import models


class Category(models.Model):
    name = models.CharField(max_length=60)

    def __str__(self):
        return self.name

    class Meta:
        verbose_name_plural = "categories"


class Product(models.Model):
    name = models.CharField(max_length=100)
    sku = models.CharField(max_length=20, unique=True)
    category = models.ForeignKey(Category, on_delete=models.PROTECT)
    price = models.DecimalField(max_digits=8, decimal_places=2)
    in_stock = models.BooleanField(default=True)
    description = models.TextField(blank=True)

    def __str__(self):
        return self.name
"""
_ADMIN = """
from django.contrib import admin
from shop.models import Category, Product


@admin.register(Product)
class ProductAdmin(admin.ModelAdmin):
    list_display = ("name", "sku", "category", "price", "in_stock")
    list_filter = ("category", "in_stock")
    search_fields = ("name", "sku")
    list_editable = ("in_stock",)


admin.site.register(Category)
"""
_SEED = """
import django, os
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "site_settings")
django.setup()
from django.contrib.auth.models import User
from shop.models import Category, Product
User.objects.create_superuser({user!r}, "admin@example.com", {password!r})
categories = [Category.objects.create(name=n) for n in ("Tools", "Garden", "Kitchen", "Books", "Toys")]
Product.objects.bulk_create(Product(name=f"Product {{i}}", sku=f"SKU-{{i:05d}}", category=categories[i % 5],
                                    price=f"{{(i * 7) % 500 + 0.99:.2f}}", in_stock=i % 3 != 0,
                                    description=f"Description of product {{i}}") for i in range({rows}))
"""


def make_django_site(folder: Path, rows: int = 400) -> Path:
    """A Django project with a `shop` app (categories, `rows` products) and a superuser, migrated."""
    (folder / "shop" / "migrations").mkdir(parents=True, exist_ok=True)
    (folder / "shop" / "__init__.py").write_text("")
    (folder / "shop" / "migrations" / "__init__.py").write_text("")
    (folder / "shop" / "models.py").write_text(_MODELS)
    (folder / "shop" / "admin.py").write_text(_ADMIN)
    (folder / "site_settings.py").write_text(_SETTINGS)
    (folder / "site_urls.py").write_text(_URLS)
    (folder / "manage.py").write_text(textwrap.dedent("""
        import os, sys
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "site_settings")
        from django.core.management import execute_from_command_line
        execute_from_command_line(sys.argv)
    """))
    (folder / "seed.py").write_text(_SEED.format(user=DJANGO_USER, password=DJANGO_PASSWORD, rows=rows))
    for args in (["manage.py", "makemigrations", "shop", "-v", "0"], ["manage.py", "migrate", "-v", "0"], ["seed.py"]):
        subprocess.run([sys.executable, *args], cwd=folder, check=True, capture_output=True, timeout=300)
    return folder


@contextmanager
def serve_django(folder: Path) -> Iterator[str]:
    """`manage.py runserver --noreload` on a free port of 127.0.0.1; yields the base URL."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen([sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
                               cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("Django's runserver did not start") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


async def django_login(page: Page, base: str) -> None:
    await page.goto(f"{base}/admin/login/?next=/admin/")
    await page.fill("#id_username", DJANGO_USER)
    await page.fill("#id_password", DJANGO_PASSWORD)
    await page.click("input[type=submit]")
    await page.wait_for_url(f"{base}/admin/")


async def onscreen_controls(page: Page) -> Counter[tuple[str, str]]:
    """(role, name) of every interactive node of Chromium's accessibility tree that is not ignored, has a
    box of some size and meets the viewport, and is not a part of another control (a date field's picker
    button)."""
    viewport = page.viewport_size or {"width": 1280, "height": 720}
    cdp = await page.context.new_cdp_session(page)
    try:
        await cdp.send("DOM.getDocument", {"depth": 0})
        nodes = (await cdp.send("Accessibility.getFullAXTree"))["nodes"]
        by_id = {node["nodeId"]: node for node in nodes}
        out: Counter[tuple[str, str]] = Counter()
        for node in nodes:
            role = node.get("role", {}).get("value")
            if node.get("ignored") or role not in CONTROL_ROLES or "backendDOMNodeId" not in node:
                continue
            if _inside_a_control(node, by_id):
                continue
            try:
                quad = (await cdp.send("DOM.getBoxModel", {"backendNodeId": node["backendDOMNodeId"]}))["model"]["border"]
            except PlaywrightError:  # not rendered
                continue
            xs, ys = quad[0::2], quad[1::2]
            if max(xs) - min(xs) < 1 or max(ys) - min(ys) < 1:
                continue
            if max(xs) <= 0 or min(xs) >= viewport["width"] or max(ys) <= 0 or min(ys) >= viewport["height"]:
                continue
            out[(role, _norm(node.get("name", {}).get("value", "")))] += 1
        return out
    finally:
        await cdp.detach()


def _inside_a_control(node: dict, by_id: dict[str, dict]) -> bool:
    parent = by_id.get(node.get("parentId", ""))
    for _ in range(64):
        if parent is None:
            return False
        if parent.get("role", {}).get("value") in CONTROL_ROLES | FIELD_ROLES and not parent.get("ignored"):
            return True
        parent = by_id.get(parent.get("parentId", ""))
    return False


def shown_controls(text: str) -> Counter[tuple[str, str]]:
    """(role, name) of the control lines of a lookout snapshot; a control without a name is known by its
    inline text (`- link [url=#x] [ref=e4]: while`)."""
    out: Counter[tuple[str, str]] = Counter()
    for line in text.splitlines():
        match = _LINE.match(line)
        if match is None or match["role"] not in CONTROL_ROLES:
            continue
        if match["name"]:
            name = json.loads(match["name"])
        else:
            rest = re.sub(r"\s*\[[^\]]*\]", "", match["rest"], count=0)
            name = rest.split(": ", 1)[1] if ": " in rest else ""
            name = json.loads(name) if name.startswith('"') and name.endswith('"') else name
        out[(match["role"], _norm(name))] += 1
    return out


def recall(truth: Counter[tuple[str, str]], shown: Counter[tuple[str, str]]) -> tuple[float, list[tuple[str, str]]]:
    """The share of `truth` found in `shown` (as a multiset), and what is missing."""
    missing = list((truth - shown).elements())
    total = sum(truth.values())
    return (1.0 if total == 0 else 1 - len(missing) / total), missing


def _norm(name: str) -> str:
    return " ".join(name.split()).casefold()  # CSS text-transform is in Chromium's names, not in the DOM's
