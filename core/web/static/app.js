// memhost settings page. Plain JavaScript, no build step; talks to the JSON API under /api with
// the session cookie. Every value from the server is put into the page as text, never as HTML.
"use strict";

(() => {
  const $ = (selector, root = document) => root.querySelector(selector);
  const $$ = (selector, root = document) => Array.from(root.querySelectorAll(selector));

  /** Build an element: attrs may hold text, className, dataset-style "data-*" keys, and
   * properties (hidden, disabled, checked, value, type...). Children are nodes or strings. */
  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "text") node.textContent = value;
      else if (key === "className") node.className = value;
      else if (key.startsWith("data-") || key.startsWith("aria-") || key === "for" ||
               key === "role" || key === "autocomplete" || key === "placeholder" ||
               key === "min" || key === "max" || key === "step" || key === "rows" ||
               key === "href" || key === "rel" || key === "target" || key === "name" ||
               key === "spellcheck" || key === "inputmode") node.setAttribute(key, value === true ? "" : String(value));
      else node[key] = value;
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  // -- the API -----------------------------------------------------------------------------------

  class ApiError extends Error {
    constructor(status, body) {
      super((body && body.error) || `HTTP ${status}`);
      this.status = status;
      this.body = body || {};
    }
  }

  async function api(method, path, body) {
    const options = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
    if (method !== "GET") {
      options.headers["Content-Type"] = "application/json";
      options.body = JSON.stringify(body === undefined ? {} : body);
    }
    let response;
    try {
      response = await fetch(path, options);
    } catch (error) {
      throw new ApiError(0, { error: "The settings server cannot be reached; is `memhost settings serve` still running?" });
    }
    let data = null;
    try {
      data = await response.json();
    } catch (error) {
      data = { error: `HTTP ${response.status}` };
    }
    if (response.status === 401) {
      notify("failed", "Signed out: open the link printed by `memhost settings serve` again.");
    }
    if (!response.ok) throw new ApiError(response.status, data);
    return data;
  }

  // -- the notice ----------------------------------------------------------------------------------

  let noticeTimer = null;
  function notify(state, text) {
    const box = $("#notice");
    box.dataset.state = state;
    box.textContent = text;
    box.hidden = false;
    clearTimeout(noticeTimer);
    if (state !== "failed") noticeTimer = setTimeout(() => { box.hidden = true; }, 6000);
  }

  function failed(prefix, error) {
    notify("failed", `${prefix}: ${error.message}`);
  }

  // -- providers -----------------------------------------------------------------------------------

  const state = { providers: null, editing: null, described: null };

  const STATUS_TEXT = {
    active: "active", available: "available", unavailable: "unavailable",
    failed: "failed", blocked: "blocked", shadowed: "shadowed",
  };

  async function loadProviders() {
    const data = await api("GET", "/api/providers");
    state.providers = data;
    renderProviders(data);
    return data;
  }

  function renderProviders(data) {
    $("#home-path").textContent = `Home: ${data.home}`;
    const note = $("#providers-note");
    let problem = "";
    if (data.config_error) problem = `config.toml cannot be read, so the chosen provider is unknown: ${data.config_error}`;
    else if (!data.configured_known) problem = `memory.provider names '${data.configured}', which is not found; only the builtin memory is active.`;
    note.textContent = problem;
    note.hidden = !problem;

    const list = $("#providers");
    list.replaceChildren();
    const builtinChosen = data.configured === "builtin";
    list.append(providerItem({
      name: "builtin", status: builtinChosen ? "active" : "available", reason: "",
      description: "The builtin memory only, no external provider.", configured: builtinChosen,
      has_schema: false, source: "memhost", version: "",
    }, false));
    for (const row of data.providers) list.append(providerItem(row, false));
    for (const row of data.shadowed) list.append(providerItem(row, true));
  }

  function providerItem(row, shadowed) {
    const item = el("li", {
      className: "provider", "data-provider": row.name, "data-status": row.status,
      "data-configured": row.configured ? "true" : "false",
      "data-editing": state.editing === row.name && !shadowed ? "true" : "false",
    });
    const head = el("div", { className: "head" },
      el("span", { className: "name", text: row.name }),
      el("span", { className: "badge", "data-status": row.status, "data-role": "status",
                   text: STATUS_TEXT[row.status] || row.status }),
      row.configured && row.status !== "active" ? el("span", { className: "badge", text: "chosen" }) : null);
    item.append(head);
    const meta = [row.source, row.version].filter(Boolean).join(" · ");
    if (meta) item.append(el("div", { className: "meta", text: meta }));
    if (row.description) item.append(el("p", { className: "reason muted", text: row.description }));
    if (row.reason) item.append(el("p", { className: "reason", "data-role": "reason", text: row.reason }));
    if (!shadowed) {
      const buttons = el("div", { className: "buttons" });
      const use = el("button", { type: "button", "data-action": "use", disabled: row.configured,
                                 text: row.configured ? "In use" : "Use this provider" });
      use.addEventListener("click", () => useProvider(row.name));
      buttons.append(use);
      if (row.has_schema) {
        const edit = el("button", { type: "button", "data-action": "edit", text: "Settings" });
        edit.addEventListener("click", () => openSettings(row.name));
        buttons.append(edit);
      }
      item.append(buttons);
    }
    return item;
  }

  async function useProvider(name) {
    try {
      const answer = await api("PUT", "/api/active", { provider: name });
      notify(answer.status === "active" ? "saved" : "failed", answer.message);
      await loadProviders();
      const row = (state.providers.providers || []).find((r) => r.name === name);
      if (row && row.has_schema) await openSettings(name);
      else if (name === "builtin") closeSettings();
    } catch (error) {
      failed("Not changed", error);
    }
  }

  // -- the settings form -----------------------------------------------------------------------

  function closeSettings() {
    state.editing = null;
    state.described = null;
    $("#settings-section").hidden = true;
    $$("#providers .provider").forEach((item) => { item.dataset.editing = "false"; });
  }

  async function openSettings(name) {
    try {
      const described = await api("GET", `/api/providers/${encodeURIComponent(name)}`);
      state.editing = name;
      renderForm(described);
      $$("#providers .provider").forEach((item) => {
        item.dataset.editing = item.dataset.provider === name ? "true" : "false";
      });
    } catch (error) {
      failed(`Cannot show the settings of ${name}`, error);
    }
  }

  function sameValue(a, b) {
    return JSON.stringify(a === undefined ? null : a) === JSON.stringify(b === undefined ? null : b);
  }

  function renderForm(described) {
    state.described = described;
    const section = $("#settings-section");
    section.hidden = false;
    $("#provider-form").dataset.provider = described.name;
    $("#settings-title").textContent = `${described.label} settings`;
    const meta = $("#settings-meta");
    meta.replaceChildren();
    const where = described.storage === "json_file" ? `${described.name}/config.json` : `[providers.${described.name}] in config.toml`;
    meta.append(`Saved to ${where}; secrets to .env. ${described.active ? "This is the active provider." : "Saving does not make it the active provider."}`);
    if (described.docs_url && /^https?:\/\//.test(described.docs_url)) {
      meta.append(" ", el("a", { href: described.docs_url, rel: "noopener noreferrer", target: "_blank", text: "Documentation" }));
    }
    showMissing(described.missing || []);

    const container = $("#form-fields");
    container.replaceChildren();
    if (!described.has_schema || !described.fields.length) {
      container.append(el("p", { className: "muted", text: "This provider declares no settings." }));
    }
    const groups = new Map();
    for (const field of described.fields) {
      const row = fieldRow(field);
      if (!field.group) {
        container.append(row);
        continue;
      }
      if (!groups.has(field.group)) {
        const fieldset = el("fieldset", { "data-group": field.group }, el("legend", { text: field.group }));
        groups.set(field.group, fieldset);
        container.append(fieldset);
      }
      groups.get(field.group).append(row);
    }
    // What the form shows before any change, as typed values: only what differs is sent.
    for (const row of $$("#form-fields .field")) {
      if (row._field.kind !== "secret") row._initial = JSON.stringify(readField(row).value ?? null);
    }
    for (const key of described.unknown_keys || []) {
      container.append(el("p", { className: "warn", text: `The stored key '${key}' is not one of this provider's settings.` }));
    }
    applyWhen();
  }

  function showMissing(missing) {
    const box = $("#settings-missing");
    box.textContent = missing.length ? `Required and not set yet: ${missing.join(", ")}.` : "";
    box.hidden = !missing.length;
  }

  function fieldRow(field) {
    const id = `field-${field.key}`;
    const row = el("div", {
      className: "field", "data-field": field.key, "data-kind": field.kind,
      "data-when": field.when ? JSON.stringify(field.when) : null,
    });
    row._field = field;
    const labelText = [field.label, field.required ? el("span", { className: "required", text: " *", "aria-label": "required" }) : null];
    let input;
    switch (field.kind) {
      case "bool": {
        input = el("input", { type: "checkbox", id, name: field.key, checked: field.value === true });
        row.append(el("label", { className: "check", for: id }, input, ...labelText));
        break;
      }
      case "select": {
        row.append(el("label", { for: id }, ...labelText));
        input = el("select", { id, name: field.key });
        const current = field.options.findIndex((o) => sameValue(o.value, field.value));
        if (current < 0) input.append(el("option", { value: "", text: "— choose —", selected: true }));
        field.options.forEach((option, index) => {
          input.append(el("option", { value: String(index), text: option.label, selected: index === current,
                                      title: option.description || null }));
        });
        row.append(input);
        break;
      }
      case "number": {
        row.append(el("label", { for: id }, ...labelText));
        input = el("input", {
          type: "number", id, name: field.key, inputmode: "decimal",
          min: field.min ?? null, max: field.max ?? null, step: field.step ?? "any",
          placeholder: field.placeholder || null,
          value: field.value === null || field.value === undefined ? "" : String(field.value),
        });
        row.append(input);
        break;
      }
      case "json": {
        row.append(el("label", { for: id }, ...labelText));
        input = el("textarea", {
          id, name: field.key, className: "mono", rows: 4, spellcheck: "false",
          placeholder: field.placeholder || '{"key": "value"}',
          value: field.value === null || field.value === undefined ? "" : JSON.stringify(field.value, null, 2),
        });
        input.addEventListener("input", () => {
          const { error } = readField(row);
          showFieldError(field.key, error || "");
        });
        row.append(input);
        break;
      }
      case "secret": {
        row.append(el("label", { for: id }, ...labelText));
        row.append(secretControls(field, id));
        input = $("input", row);
        break;
      }
      default: {
        row.append(el("label", { for: id }, ...labelText));
        input = el("input", {
          type: "text", id, name: field.key, autocomplete: "off", placeholder: field.placeholder || null,
          value: field.value === null || field.value === undefined ? "" : String(field.value),
        });
        row.append(input);
      }
    }
    const help = [];
    if (field.description) help.push(field.description);
    if (field.kind === "secret") help.push(`Kept in .env as ${field.env_key}; never shown again.`);
    else if (field.default !== null && field.default !== undefined && field.kind !== "bool") {
      help.push(`Default: ${typeof field.default === "object" ? JSON.stringify(field.default) : field.default}.`);
    }
    if (help.length) row.append(el("p", { className: "help", id: `${id}-help`, text: help.join(" ") }));
    if (input && help.length) input.setAttribute("aria-describedby", `${id}-help`);
    row.append(el("p", { className: "error", role: "alert", "data-error-for": field.key, text: field.error || "" }));
    if (field.error) row.dataset.invalid = "true";
    return row;
  }

  function secretControls(field, id) {
    const box = el("div", { className: "secret-row" });
    const stateText = field.is_set ? "set" : "not set";
    box.append(el("span", { className: "secret-state", "data-secret-state": stateText, text: stateText }));
    // The value never comes back from the server; this input only ever sends a new one.
    const input = el("input", {
      type: "password", id, name: field.key, autocomplete: "new-password", value: "",
      placeholder: field.is_set ? "new value" : "enter the value", hidden: field.is_set,
    });
    box.append(input);
    if (field.is_set) {
      const replace = el("button", { type: "button", "data-action": "replace-secret", text: "Replace" });
      const cancel = el("button", { type: "button", "data-action": "cancel-secret", text: "Cancel", hidden: true });
      const clear = el("button", { type: "button", className: "danger", "data-action": "clear-secret", text: "Clear" });
      replace.addEventListener("click", () => {
        input.hidden = false; replace.hidden = true; cancel.hidden = false; input.focus();
      });
      cancel.addEventListener("click", () => {
        input.value = ""; input.hidden = true; replace.hidden = false; cancel.hidden = true;
      });
      clear.addEventListener("click", () => clearSecret(field.key));
      box.append(replace, cancel, clear);
    }
    return box;
  }

  /** The typed value of a field row: {value} or {error}; value null means blank (the default). */
  function readField(row) {
    const field = row._field;
    const input = $("input, select, textarea", row);
    switch (field.kind) {
      case "bool":
        return { value: input.checked };
      case "select":
        return { value: input.value === "" ? null : field.options[Number(input.value)].value };
      case "number": {
        if (input.validity && input.validity.badInput) return { error: "must be a number" };
        const text = input.value.trim();
        if (!text) return { value: null };
        const number = Number(text);
        if (!Number.isFinite(number)) return { error: "must be a number" };
        return { value: number };
      }
      case "json": {
        const text = input.value.trim();
        if (!text) return { value: null };
        let parsed;
        try {
          parsed = JSON.parse(text);
        } catch (error) {
          return { error: `is not valid JSON (${error.message})` };
        }
        if (parsed === null || typeof parsed !== "object") return { error: "must be a JSON object or array" };
        return { value: parsed };
      }
      case "secret":
        return { value: input.hidden ? "" : input.value };
      default:
        return { value: input.value === "" ? null : input.value };
    }
  }

  function currentValues() {
    const values = {};
    for (const row of $$("#form-fields .field")) {
      if (row._field.kind === "secret") continue;
      const { value, error } = readField(row);
      values[row._field.key] = error ? undefined : (value === null ? row._field.default : value);
    }
    return values;
  }

  function applyWhen() {
    const values = currentValues();
    for (const row of $$("#form-fields .field[data-when]")) {
      const when = JSON.parse(row.dataset.when);
      const shown = Object.entries(when).every(([key, want]) => values[key] !== undefined && values[key] !== null && sameValue(values[key], want));
      row.hidden = !shown;
    }
  }

  function showFieldError(key, message) {
    const target = $(`#form-fields [data-error-for="${CSS.escape(key)}"]`);
    if (!target) return false;
    target.textContent = message;
    target.closest(".field").dataset.invalid = message ? "true" : "false";
    return true;
  }

  function clearFieldErrors() {
    for (const node of $$("#form-fields [data-error-for]")) {
      node.textContent = "";
      node.closest(".field").dataset.invalid = "false";
    }
  }

  async function submitForm(event) {
    event.preventDefault();
    const described = state.described;
    if (!described) return;
    clearFieldErrors();
    const values = {};
    let invalid = 0;
    for (const row of $$("#form-fields .field")) {
      if (row.hidden) continue; // a field whose condition is off is not written
      const field = row._field;
      const { value, error } = readField(row);
      if (error) {
        showFieldError(field.key, error);
        invalid += 1;
        continue;
      }
      if (field.kind === "secret") {
        if (value && value.trim()) values[field.key] = value;
      } else if (JSON.stringify(value ?? null) !== row._initial) {
        // Changed in the form: send it (a blank goes back to the default).
        if (!(value === null && field.source !== "stored")) values[field.key] = value;
      }
    }
    if (invalid) {
      notify("failed", `Not saved: ${invalid} field${invalid === 1 ? "" : "s"} need${invalid === 1 ? "s" : ""} fixing.`);
      return;
    }
    if (!Object.keys(values).length) {
      notify("info", "Nothing to save: no field was changed.");
      return;
    }
    const save = $("#save");
    save.disabled = true;
    try {
      const updated = await api("PUT", `/api/providers/${encodeURIComponent(described.name)}/config`, { values });
      renderForm(updated);
      notify("saved", `Saved the settings of ${updated.label}.`);
      loadProviders().catch(() => {});
    } catch (error) {
      const fields = error.body.fields || {};
      let shown = 0;
      for (const [key, message] of Object.entries(fields)) {
        if (showFieldError(key, message)) shown += 1;
      }
      notify("failed", shown ? `Not saved: ${shown} field${shown === 1 ? "" : "s"} need${shown === 1 ? "s" : ""} fixing. Nothing was changed.` : `Not saved: ${error.message}`);
    } finally {
      save.disabled = false;
    }
  }

  async function clearSecret(key) {
    const described = state.described;
    try {
      const updated = await api("POST", `/api/providers/${encodeURIComponent(described.name)}/clear-secret`, { key });
      renderForm(updated);
      notify("saved", `Cleared the secret ${key}.`);
    } catch (error) {
      showFieldError(key, error.body.fields?.[key] || error.message);
      failed("Not cleared", error);
    }
  }

  // -- memory ----------------------------------------------------------------------------------

  const STORE_ROLE = { memory: "the agent's notes", user: "the user profile" };

  async function loadMemory() {
    const data = await api("GET", "/api/memory");
    const container = $("#stores");
    container.replaceChildren(...data.stores.map(storeView));
    setPendingCount(data.pending);
    return data;
  }

  function storeView(store) {
    const section = el("section", { className: "store", "data-store": store.target,
                                    "aria-label": store.file });
    section.append(el("h3", {},
      el("span", { text: store.file }),
      el("span", { className: "muted", text: `(${STORE_ROLE[store.target] || store.target})` }),
      store.enabled ? null : el("span", { className: "badge", "data-status": "unavailable", text: "disabled" })));
    const percent = store.limit > 0 ? Math.round((store.used / store.limit) * 100) : (store.used ? 100 : 0);
    const fill = el("div", { className: "fill", "data-level": percent > 100 ? "over" : percent >= 80 ? "high" : "ok" });
    fill.style.width = `${Math.min(percent, 100)}%`; // CSSOM, allowed by the style-src policy
    section.append(el("div", { className: "usage", "data-used": store.used, "data-limit": store.limit },
      el("div", { className: "bar", role: "meter", "aria-valuemin": 0, "aria-valuemax": store.limit,
                  "aria-valuenow": store.used, "aria-label": `${store.file} usage` }, fill),
      el("span", { className: "usage-text",
                   text: `${store.used.toLocaleString()} / ${store.limit.toLocaleString()} chars (${percent}%) · ${store.entry_count} entr${store.entry_count === 1 ? "y" : "ies"}` })));
    if (!store.enabled) section.append(el("p", { className: "muted", text: `Disabled by ${store.enabled_by}.` }));
    if (!store.readable) section.append(el("p", { className: "error", text: store.error }));
    if (store.drift) section.append(el("p", { className: "warn", text: `The file was edited in a way memhost cannot safely change (${store.drift}); replace and remove are refused until it is fixed.` }));
    const list = el("ol", { className: "entries" });
    for (const entry of store.entries) list.append(entryView(store, entry));
    if (!store.entries.length) list.append(el("li", { className: "muted", text: "No entries yet." }));
    section.append(list);
    if (store.enabled && store.readable) section.append(addForm(store));
    return section;
  }

  function entryView(store, entry) {
    const item = el("li", {
      className: "entry", "data-entry-index": entry.index,
      "data-pinned": entry.pinned ? "true" : null, "data-stale": entry.stale ? "true" : null,
    });
    const text = el("p", { className: "entry-text", text: entry.text });
    const meta = el("div", { className: "entry-meta" },
      el("span", { text: `#${entry.index}` }),
      el("span", { text: entry.age === "unknown" ? "age unknown" : `added ${entry.age} ago` }),
      entry.origin ? el("span", { text: `by ${entry.origin}` }) : null,
      entry.pinned ? el("span", { className: "badge pinned", "data-flag": "pinned", text: "pinned" }) : null,
      entry.stale ? el("span", { className: "badge stale", "data-flag": "stale", text: "stale",
                                 title: entry.stale_reason || null }) : null,
      entry.review_after ? el("span", { "data-flag": "review-after", text: `review after ${entry.review_after}` }) : null,
      entry.blocked && entry.blocked.length ? el("span", { className: "badge withheld", "data-flag": "withheld", text: `withheld from the prompt: ${entry.blocked.join(", ")}` }) : null);
    const error = el("p", { className: "error", role: "alert", "data-entry-error": "" });
    item.append(text, meta);
    if (store.enabled && store.readable) {
      const actions = el("div", { className: "entry-actions" });
      const edit = el("button", { type: "button", "data-action": "edit-entry", text: "Edit" });
      const remove = el("button", { type: "button", className: "danger", "data-action": "remove-entry", text: "Remove" });
      edit.addEventListener("click", () => editEntry(store, entry, item, text, actions, error));
      remove.addEventListener("click", () => writeMemory(store.target, { action: "remove", old_text: entry.text }, error, "Entry removed."));
      actions.append(edit, remove);
      item.append(actions);
    }
    item.append(error);
    return item;
  }

  function editEntry(store, entry, item, text, actions, error) {
    const area = el("textarea", { "aria-label": "Entry text", value: entry.text, name: "content" });
    const save = el("button", { type: "button", className: "primary", "data-action": "save-entry", text: "Save" });
    const cancel = el("button", { type: "button", "data-action": "cancel-entry", text: "Cancel" });
    const editor = el("div", { className: "entry-editor" }, area, el("div", { className: "entry-actions" }, save, cancel));
    text.hidden = true;
    actions.hidden = true;
    item.insertBefore(editor, text);
    area.focus();
    cancel.addEventListener("click", () => {
      editor.remove(); text.hidden = false; actions.hidden = false; error.textContent = "";
    });
    save.addEventListener("click", () => {
      if (area.value === entry.text) { cancel.click(); return; }
      writeMemory(store.target, { action: "replace", old_text: entry.text, content: area.value }, error, "Entry replaced.");
    });
  }

  function addForm(store) {
    const form = el("form", { className: "add-entry", "data-add-store": store.target });
    const area = el("textarea", { name: "content", placeholder: `A new entry for ${store.file}`, "aria-label": `New entry for ${store.file}` });
    const error = el("p", { className: "error", role: "alert", "data-entry-error": "" });
    form.append(area, el("div", { className: "entry-actions" }, el("button", { type: "submit", "data-action": "add-entry", text: "Add entry" })), error);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      writeMemory(store.target, { action: "add", content: area.value }, error, "Entry added.");
    });
    return form;
  }

  async function writeMemory(target, body, errorNode, done) {
    errorNode.textContent = "";
    try {
      const answer = await api("POST", `/api/memory/${encodeURIComponent(target)}`, body);
      notify("saved", answer.message && !answer.message.startsWith("Entry") ? answer.message : done);
      await Promise.all([loadMemory(), loadArchive()]);
    } catch (error) {
      errorNode.textContent = error.message;
      failed("Not saved", error);
    }
  }

  // -- approvals --------------------------------------------------------------------------------

  function setPendingCount(count) {
    const badge = $("#pending-badge");
    badge.textContent = String(count || 0);
    badge.hidden = !count;
  }

  async function loadPending() {
    const data = await api("GET", "/api/pending");
    const list = $("#pending");
    list.replaceChildren();
    for (const record of data.pending) {
      const item = el("li", { className: "card", "data-pending-id": record.id });
      const [summary] = record.summary.split(": ");
      item.append(el("div", { className: "summary", text: summary }),
        el("div", { className: "meta", text: `${record.id} · ${record.origin} · ${record.age} ago` }),
        el("pre", { text: record.detail }));
      const error = el("p", { className: "error", role: "alert" });
      const approve = el("button", { type: "button", className: "primary", "data-action": "approve", text: "Approve" });
      const reject = el("button", { type: "button", className: "danger", "data-action": "reject", text: "Reject" });
      approve.addEventListener("click", () => decide(record.id, "approve", error));
      reject.addEventListener("click", () => decide(record.id, "reject", error));
      item.append(el("div", { className: "card-actions" }, approve, reject), error);
      list.append(item);
    }
    for (const bad of data.unreadable) {
      list.append(el("li", { className: "card warn", text: `${bad.path} is not a readable pending write (${bad.reason}).` }));
    }
    if (!list.children.length) list.append(el("li", { className: "muted", text: "Nothing is waiting for approval." }));
    setPendingCount(data.pending.length);
  }

  async function decide(id, verdict, errorNode) {
    errorNode.textContent = "";
    try {
      await api("POST", `/api/pending/${encodeURIComponent(id)}/${verdict}`, {});
      notify("saved", verdict === "approve" ? `Approved ${id}: the change is saved.` : `Rejected ${id}: nothing was changed.`);
      await Promise.all([loadPending(), loadMemory(), loadArchive()]);
    } catch (error) {
      errorNode.textContent = error.message;
      failed(verdict === "approve" ? "Not approved" : "Not rejected", error);
    }
  }

  // -- archive ----------------------------------------------------------------------------------

  async function loadArchive() {
    const data = await api("GET", "/api/archive?limit=50");
    const list = $("#archive");
    list.replaceChildren();
    for (const record of data.entries) {
      const when = new Date(record.time * 1000).toLocaleString();
      const item = el("li", { className: "card", "data-archive-id": record.id });
      const error = el("p", { className: "error", role: "alert" });
      const restore = el("button", { type: "button", "data-action": "restore", text: "Restore" });
      restore.addEventListener("click", async () => {
        error.textContent = "";
        try {
          await api("POST", `/api/archive/${encodeURIComponent(record.id)}/restore`, {});
          notify("saved", `Restored ${record.id} to ${record.target === "user" ? "USER.md" : "MEMORY.md"}.`);
          await Promise.all([loadMemory(), loadArchive()]);
        } catch (failure) {
          error.textContent = failure.message;
          failed("Not restored", failure);
        }
      });
      item.append(el("div", { className: "meta", text: `${record.id} · ${when} · ${record.target} · ${record.action}${record.origin ? ` · ${record.origin}` : ""}` }),
        el("pre", { text: record.text }), el("div", { className: "card-actions" }, restore), error);
      list.append(item);
    }
    if (!data.entries.length) list.append(el("li", { className: "muted", text: "The archive is empty." }));
  }

  // -- recall store -------------------------------------------------------------------------------

  async function loadRecall(query = "") {
    const note = $("#recall-note");
    const list = $("#recall");
    list.replaceChildren();
    let data;
    try {
      data = await api("GET", `/api/recall?limit=30&query=${encodeURIComponent(query)}`);
    } catch (error) {
      if (error.status === 409 || error.status === 404) {
        note.textContent = error.message;
        note.hidden = false;
        return;
      }
      throw error;
    }
    note.textContent = query ? `Best first, as recall ranks them (${data.provider}).` : `The newest items (${data.provider}).`;
    note.hidden = false;
    for (const hit of data.results) {
      const item = el("li", { className: "card", "data-recall-id": hit.id });
      const error = el("p", { className: "error", role: "alert" });
      const forget = el("button", { type: "button", className: "danger", "data-action": "forget", text: "Forget" });
      forget.addEventListener("click", async () => {
        error.textContent = "";
        if (!window.confirm(`Forget item #${hit.id} for good? Its text is erased.`)) return;
        try {
          await api("POST", `/api/recall/${encodeURIComponent(hit.id)}/forget`, {});
          notify("saved", `Forgot item #${hit.id}.`);
          item.remove();
        } catch (failure) {
          error.textContent = failure.message;
          failed("Not forgotten", failure);
        }
      });
      const kind = hit.role ? `${hit.kind} · ${hit.role}` : hit.kind;
      item.append(el("div", { className: "meta", text: `#${hit.id} · ${hit.date} · ${kind}${hit.session_id ? ` · ${hit.session_id}` : ""}` }),
        el("pre", { text: hit.text }), el("div", { className: "card-actions" }, forget), error);
      list.append(item);
    }
    if (!data.results.length) list.append(el("li", { className: "muted", text: query ? "Nothing stored matches that." : "Nothing is stored yet." }));
  }

  // -- start --------------------------------------------------------------------------------------

  async function start() {
    const form = $("#provider-form");
    form.addEventListener("submit", submitForm);
    form.addEventListener("input", applyWhen);
    form.addEventListener("change", applyWhen);
    $("#recall-form").addEventListener("submit", (event) => {
      event.preventDefault();
      loadRecall($("#recall-query").value.trim()).catch((error) => failed("Search failed", error));
    });
    $("#undo").addEventListener("click", () => {
      if (state.described) { renderForm(state.described); notify("info", "Changes undone."); }
    });
    const jobs = [
      loadProviders().then(async (data) => {
        const chosen = data.providers.find((row) => row.configured && row.has_schema);
        if (chosen) await openSettings(chosen.name);
      }),
      loadMemory(), loadPending(), loadArchive(), loadRecall(),
    ];
    const results = await Promise.allSettled(jobs);
    const failure = results.find((r) => r.status === "rejected");
    if (failure) failed("Could not load everything", failure.reason);
    document.body.dataset.ready = "true";
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
