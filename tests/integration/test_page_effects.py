"""What an action's answer holds for the next step (real headless Chromium, pages served from 127.0.0.1): effects
from inside open shadow roots and custom widgets, focus named by role and name (never the shadow host), every
on-screen control of the page an action lands on, the outcome in the action's snapshot, and input a control
cannot take refused as bad input naming the control and what it accepts."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from lookout.browser.action_kinds import Action, Click, Fill, Navigate, Press, Select
from lookout.browser.registry import PageRegistry
from lookout.browser.snapshot_view import SnapshotOptions
from lookout.core.errors import BadInput
from tests.support.pages import ref_of
from tests.support.real_pages import (
    DJANGO_PASSWORD,
    DJANGO_USER,
    make_django_site,
    onscreen_controls,
    recall,
    serve_django,
    shown_controls,
)
from tests.support.site import serve_directory

COMPONENTS = """<!doctype html><html><head><title>Components</title></head><body>
<h1>Settings</h1>
<x-select></x-select><x-check></x-check><x-radio></x-radio><x-slider></x-slider><x-field></x-field>
<script>
const define = (name, html, setup) => customElements.define(name, class extends HTMLElement {
  connectedCallback() { const root = this.attachShadow({mode: 'open'}); root.innerHTML = html; setup && setup(root); }
});
define('x-select', '<label for=s>Size</label><select id=s><option>Small</option><option>Large</option></select>');
define('x-check', '<label><input type=checkbox> Subscribe</label>');
define('x-radio', '<fieldset><legend>Colour</legend><label><input type=radio name=c checked> Red</label>'
  + '<label><input type=radio name=c> Blue</label></fieldset>');
define('x-slider', '<div role=slider tabindex=0 aria-label=Volume aria-valuemin=0 aria-valuemax=100 aria-valuenow=50>'
  + '</div><span>Volume 50</span>', root => {
  const knob = root.querySelector('[role=slider]');
  knob.style.cssText = 'display:inline-block;width:100px;height:10px;background:#ccc';
  knob.addEventListener('keydown', event => {
    if (event.key !== 'ArrowRight') return;
    const value = Number(knob.getAttribute('aria-valuenow')) + 10;
    knob.setAttribute('aria-valuenow', value);
    root.querySelector('span').textContent = 'Volume ' + value;
  });
});
define('x-field', '<label for=n>Name</label><input id=n><p role=status></p>', root => {
  root.querySelector('input').addEventListener('input', event => {
    root.querySelector('p').textContent = 'Hello, ' + event.target.value;
  });
});
</script></body></html>"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("site")
    (root / "components.html").write_text(COMPONENTS)
    with serve_directory(root) as url:
        yield url


@pytest.fixture(scope="module")
def django_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serve_django(make_django_site(tmp_path_factory.mktemp("django"))) as url:
        yield url


async def test_effects_and_focus_from_inside_shadow_roots(pages: PageRegistry, site: str) -> None:
    page = pages.get((await pages.create(f"{site}/components.html", (1280, 720)))["id"])
    text = (await page.snapshot(SnapshotOptions()))["text"]

    async def act(action: Action) -> dict:
        return (await page.act(action, None))["effects"]

    selected = await act(Select(ref=ref_of(text, '- combobox "Size"'), values=("Large",)))
    assert selected["controls"] == [{"control": 'combobox "Size"', "selected": "Large"}]
    assert "focus" not in selected, "selecting an option does not move the focus"
    checked = await act(Click(ref=ref_of(text, '- checkbox "Subscribe"')))
    assert checked["controls"] == [{"control": 'checkbox "Subscribe"', "checked": True}]
    assert checked["focus"] == 'checkbox "Subscribe"'
    radio = await act(Click(ref=ref_of(text, '- radio "Blue"')))
    assert {"control": 'radio "Blue"', "checked": True} in radio["controls"]
    assert {"control": 'radio "Red"', "checked": False} in radio["controls"]
    assert radio["focus"] == 'radio "Blue"'
    slid = await act(Press(ref=ref_of(text, '- slider "Volume"'), key="ArrowRight"))
    assert slid["controls"] == [{"control": 'slider "Volume"', "value": "60"}]
    assert {"kind": "added", "text": "Volume 60"} in slid["text"]
    assert slid["focus"] == 'slider "Volume"'
    filled = await act(Fill(ref=ref_of(text, '- textbox "Name"'), text="Ada"))
    assert filled["controls"] == [{"control": 'textbox "Name"', "value": "Ada"}]
    assert {"kind": "status", "text": "Hello, Ada"} in filled["text"]
    assert filled["focus"] == 'textbox "Name"'


async def _logged_in(pages: PageRegistry, base: str) -> str:
    page_id = (await pages.create(f"{base}/admin/login/", (1280, 720)))["id"]
    page = pages.get(page_id)
    text = (await page.snapshot(SnapshotOptions()))["text"]
    await page.act(Fill(ref=ref_of(text, '- textbox "Username:"'), text=DJANGO_USER), None)
    await page.act(Fill(ref=ref_of(text, '- textbox "Password:"'), text=DJANGO_PASSWORD), None)
    logged = await page.act(Click(ref=ref_of(text, '- button "Log in"')), SnapshotOptions(max_tokens=2000))
    assert logged["effects"]["navigation"]["url"] == f"{base}/admin/"
    assert "focus" not in logged["effects"], "no focus: null after a navigation"
    return page_id


@pytest.mark.parametrize("max_tokens", [4000, 2000])
async def test_an_action_that_lands_on_a_list_shows_its_filters_and_row_links(
    pages: PageRegistry, django_url: str, max_tokens: int
) -> None:
    """The answer of the click that opens Django's product list (with the default snapshot, as the MCP tool asks
    for it, and with 2,000 tokens) shows every control on screen: the filters ("Toys", "Yes") and the rows'
    links, each with a ref, before any row off screen."""
    page_id = await _logged_in(pages, django_url)
    page = pages.get(page_id)
    index = (await page.snapshot(SnapshotOptions()))["text"]
    opened = await page.act(Click(ref=ref_of(index, '- link "Products"')), SnapshotOptions(max_tokens=max_tokens))
    assert opened["effects"]["navigation"]["url"] == f"{django_url}/admin/shop/product/"
    text = opened["snapshot"]["text"]
    assert opened["snapshot"]["metadata"]["tokens"] <= max_tokens
    share, missing = recall(await onscreen_controls(page.page), shown_controls(text))
    if max_tokens == 4000:
        assert missing == [] and share == 1.0, text
    else:  # the filters and the page's other controls on screen first, then the rows' as many as fit
        rows = [c for c in missing if c[1].startswith("product ") or c[1] == "" or "select this object" in c[1]]
        assert set(missing) - set(rows) <= {("link", "home"), ("link", "shop")}, (missing, text)  # breadcrumbs
    for line in ('- link "Toys"', '- link "Tools"', '- link "Yes"') + (('- link "Product 399"',) if max_tokens == 4000 else ()):
        assert ref_of(text, line)


async def test_the_outcome_is_in_the_snapshot_of_the_action_that_caused_it(
    pages: PageRegistry, django_url: str
) -> None:
    page_id = await _logged_in(pages, django_url)
    page = pages.get(page_id)
    await page.act(Navigate(url=f"{django_url}/admin/shop/product/7/change/"), None)
    form = (await page.snapshot(SnapshotOptions()))["text"]
    saved = await page.act(Click(ref=ref_of(form, '- button "Save" [')), SnapshotOptions(max_tokens=2000))
    message = "The product “Product 6” was changed successfully."  # pk 7: the seventh product, from 0
    assert {"kind": "message", "text": message} in saved["effects"]["text"]
    assert f"# Outcome: message: {message}" in saved["snapshot"]["text"]

    await page.act(Navigate(url=f"{django_url}/admin/shop/product/7/change/"), None)
    form = (await page.snapshot(SnapshotOptions()))["text"]
    await page.act(Fill(ref=ref_of(form, '- textbox "Name:"'), text=""), None)
    refused = await page.act(Click(ref=ref_of(form, '- button "Save" [')), SnapshotOptions(max_tokens=2000))
    assert {"kind": "field_error", "text": "Name: This field is required."} in refused["effects"]["text"], refused
    assert "# Outcome: field_error: Name: This field is required." in refused["snapshot"]["text"]


async def test_input_a_control_cannot_take_is_bad_input_naming_it(pages: PageRegistry, django_url: str) -> None:
    page_id = await _logged_in(pages, django_url)
    page = pages.get(page_id)
    await page.act(Navigate(url=f"{django_url}/admin/shop/product/7/change/"), None)
    form = (await page.snapshot(SnapshotOptions()))["text"]
    price = ref_of(form, '- spinbutton "Price:"')
    with pytest.raises(BadInput) as letters:
        await page.act(Fill(ref=price, text="twelve"), None)
    assert letters.value.details["field"] == "text"
    assert 'spinbutton "Price:"' in letters.value.message and "a number" in letters.value.message
    with pytest.raises(BadInput) as option:
        await page.act(Select(ref=ref_of(form, '- combobox "Category:"'), values=("Pets",)), None)
    assert option.value.details["field"] == "values"
    assert 'combobox "Category:"' in option.value.message and '"Toys"' in option.value.message
    assert "'Pets' is not one" in option.value.message
    done = await page.act(Fill(ref=price, text="12.50"), None)  # nothing ran, and the page goes on
    assert done["effects"]["controls"] == [{"control": 'spinbutton "Price:"', "value": "12.50"}]
