# lookout in a container: the daemon on 0.0.0.0:8765 inside it, its data in the /data volume.
#   docker build -t lookout .
#   docker run -p 127.0.0.1:8765:8765 -e LOOKOUT_TOKEN=<a long random string> -v lookout-data:/data lookout
# (or `docker compose up -d`, see compose.yaml). Listening on 0.0.0.0 needs LOOKOUT_TOKEN: without it
# `lookout serve` refuses to start.

# The web UI's own files need no build; xterm.js comes from npm, installed here from lookout/web's lock file.
FROM node:20-bookworm-slim AS web
WORKDIR /web
COPY lookout/web/package.json lookout/web/package-lock.json ./
RUN npm ci --no-audit --no-fund --omit=dev

# lookout as a wheel, built here so that no build/ or *.egg-info ends up in the image
FROM python:3.11-slim-bookworm AS wheel
WORKDIR /src
COPY pyproject.toml README.md ./
COPY lookout ./lookout
RUN pip wheel --no-deps --wheel-dir /wheels .

FROM python:3.11-slim-bookworm

# bash and zsh: the shells terminals run, with lookout's shell integration; chromium and fonts: browser
# pages; libatomic1: the node that Playwright's driver bundles needs it; adb: Android devices; tini: PID 1,
# which passes signals on to `lookout supervise` (the child subreaper that reaps the holders and what
# terminals leave behind)
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        bash zsh chromium fonts-dejavu-core fonts-liberation fonts-noto-color-emoji libatomic1 adb tini \
    && rm -rf /var/lib/apt/lists/*

# what an agent's shell in a terminal expects to find: git, curl, less, jq, ps and top (procps), an editor
# (vim-tiny, as `vi`) and ssh (openssh-client): 104 MB, 94 of them git and its Perl (docs/operations.md). A
# derived image adds more.
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        git curl less jq procps vim-tiny openssh-client ca-certificates \
    && rm -rf /var/lib/apt/lists/*

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONUNBUFFERED=1 \
    LANG=C.UTF-8

# the dependencies first, in their own layer, so a change to the code does not reinstall them; at the versions
# pinned in requirements.lock, the file `make` installs from too
WORKDIR /tmp/lookout-install
COPY pyproject.toml requirements.lock ./
RUN python -c "import subprocess, sys, tomllib; \
deps = tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']; \
subprocess.check_call([sys.executable, '-m', 'pip', 'install', '-c', 'requirements.lock', *deps])"

# lookout from its wheel; then every module of it imports with the runtime dependencies alone (the check
# `make check` runs in a venv without the test extra), run outside any source tree
COPY --from=wheel /wheels ./wheels
COPY deploy/check_imports.py ./
RUN pip install --no-deps wheels/*.whl \
    && python check_imports.py \
    && cd / && rm -rf /tmp/lookout-install

# the web UI's static files and xterm.js from npm (the package itself is in site-packages)
WORKDIR /opt/lookout
COPY lookout/web ./web
COPY --from=web /web/node_modules ./web/node_modules

# the build fails here when the daemon's own launch code cannot start the browser (Playwright's driver, its
# libraries, Chromium itself), instead of every page call failing at run time
RUN python -c "import asyncio; from lookout.browser.browser import BrowserHost; \
asyncio.run(BrowserHost('/usr/bin/chromium').check())"

RUN useradd --create-home --uid 1000 --shell /bin/bash lookout \
    && mkdir -m 700 /data \
    && chown lookout:lookout /data

USER lookout
WORKDIR /home/lookout
ENV SHELL=/bin/bash \
    LOOKOUT_HOST=0.0.0.0 \
    LOOKOUT_PORT=8765 \
    LOOKOUT_DATA_DIR=/data \
    LOOKOUT_WEB_DIR=/opt/lookout/web \
    LOOKOUT_BROWSER_EXECUTABLE=/usr/bin/chromium

VOLUME /data
EXPOSE 8765

HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8765/healthz', timeout=4)"]

ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["lookout", "supervise"]
