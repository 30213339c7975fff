-- Driven by test_neovim.py: `nvim --headless --clean -l nvim_quickfix.lua`.
--
-- Loads editors/nvim/lsp/skill_eval.lua the way a user does (runtimepath +
-- vim.lsp.enable), opens a probe.json whose step_heading is wrong, waits for
-- SE101, applies its quick fix through textDocument/codeAction, waits for SE101
-- to go away, writes the buffer, and records every step in a JSON result file.
-- Exit status: 0 when every step passed, 1 otherwise.
--
-- Inputs (environment): SKILL_EVAL_NVIM_RTP (editors/nvim), SKILL_EVAL_LS_CMD
-- (JSON array), SKILL_EVAL_PROBE, SKILL_EVAL_OTHER_JSON (a JSON file the server
-- must not attach to), SKILL_EVAL_EXPECTED_HEADING, SKILL_EVAL_RESULT,
-- SKILL_EVAL_WAIT_MS (per-step timeout).

local env = vim.env
local result = { steps = {}, ok = false }
local wait_ms = tonumber(env.SKILL_EVAL_WAIT_MS or "15000")

local function step(name, ok, detail)
  -- Details are inspected to text: they may hold functions (not JSON).
  table.insert(result.steps, { name = name, ok = ok and true or false, detail = detail ~= nil and vim.inspect(detail) or nil })
  if not ok then
    error(("step %q failed: %s"):format(name, vim.inspect(detail)), 0)
  end
end

local function se101(bufnr)
  return vim.tbl_filter(function(d)
    return d.code == "SE101"
  end, vim.diagnostic.get(bufnr))
end

local function client_for(bufnr)
  return vim.lsp.get_clients({ bufnr = bufnr, name = "skill_eval" })[1]
end

local function main()
  vim.opt.rtp:append(env.SKILL_EVAL_NVIM_RTP)
  vim.lsp.config("skill_eval", { cmd = vim.json.decode(env.SKILL_EVAL_LS_CMD) })
  vim.lsp.enable("skill_eval")
  step("config loaded from runtimepath", vim.lsp.config.skill_eval ~= nil
    and vim.deep_equal(vim.lsp.config.skill_eval.filetypes, { "json", "markdown" }), vim.lsp.config.skill_eval)

  -- A JSON file that is not a probe: the server must not attach.
  vim.cmd.edit(vim.fn.fnameescape(env.SKILL_EVAL_OTHER_JSON))
  local other = vim.api.nvim_get_current_buf()
  step("filetype of the other file is json", vim.bo[other].filetype == "json", vim.bo[other].filetype)

  vim.cmd.edit(vim.fn.fnameescape(env.SKILL_EVAL_PROBE))
  local bufnr = vim.api.nvim_get_current_buf()
  step("filetype of probe.json is json", vim.bo[bufnr].filetype == "json", vim.bo[bufnr].filetype)

  local attached = vim.wait(wait_ms, function()
    local client = client_for(bufnr)
    return client ~= nil and client.initialized
  end, 50)
  step("client attached to probe.json", attached, vim.tbl_map(function(c)
    return c.name
  end, vim.lsp.get_clients()))
  local client = client_for(bufnr)
  result.root_dir = client.root_dir
  step("root_dir is the skill-eval.toml folder", client.root_dir == env.SKILL_EVAL_ROOT,
    { got = client.root_dir, want = env.SKILL_EVAL_ROOT })
  step("client not attached to the other json file", client_for(other) == nil, nil)

  local got = vim.wait(wait_ms, function()
    return #se101(bufnr) > 0
  end, 50)
  step("SE101 published", got, vim.diagnostic.get(bufnr))
  local diagnostic = se101(bufnr)[1]
  result.diagnostic = { message = diagnostic.message, lnum = diagnostic.lnum, col = diagnostic.col }
  local lsp_diagnostic = diagnostic.user_data and diagnostic.user_data.lsp
  step("diagnostic carries its LSP form", lsp_diagnostic ~= nil, diagnostic)

  local params = {
    textDocument = vim.lsp.util.make_text_document_params(bufnr),
    range = lsp_diagnostic.range,
    context = { diagnostics = { lsp_diagnostic }, only = { "quickfix" }, triggerKind = 1 },
  }
  local response, err = client:request_sync("textDocument/codeAction", params, wait_ms, bufnr)
  step("codeAction answered", response ~= nil and response.err == nil, { err = err, response = response })
  local actions = response.result or {}
  result.actions = vim.tbl_map(function(a)
    return a.title
  end, actions)
  local wanted = env.SKILL_EVAL_EXPECTED_HEADING
  local action
  for _, candidate in ipairs(actions) do
    if candidate.title and candidate.title:find(wanted, 1, true) then
      action = candidate
      break
    end
  end
  step("a quick fix names the close heading", action ~= nil, result.actions)
  if not action.edit and action.data ~= nil then
    local resolved = client:request_sync("codeAction/resolve", action, wait_ms, bufnr)
    action = resolved and resolved.result or action
  end
  step("the quick fix carries a WorkspaceEdit", action.edit ~= nil, action)

  vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding)
  local text = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n")
  step("buffer now names the heading", text:find(vim.json.encode(wanted), 1, true) ~= nil, text)

  local gone = vim.wait(wait_ms, function()
    return #se101(bufnr) == 0
  end, 50)
  step("SE101 gone after the fix", gone, vim.diagnostic.get(bufnr))

  vim.cmd.write()
  step("buffer written", not vim.bo[bufnr].modified, nil)
  result.remaining = vim.tbl_map(function(d)
    return { code = d.code, message = d.message }
  end, vim.diagnostic.get(bufnr))

  -- SKILL.md: the fixed probe now anchors on the heading; its code lens runs the
  -- config's skill-eval.showProbes handler, which fills the quickfix list.
  vim.cmd.edit(vim.fn.fnameescape(env.SKILL_EVAL_SKILL))
  local skill_buf = vim.api.nvim_get_current_buf()
  step("client attached to SKILL.md", vim.wait(wait_ms, function()
    return client_for(skill_buf) ~= nil
  end, 50), nil)
  local lens_response = client:request_sync("textDocument/codeLens",
    { textDocument = vim.lsp.util.make_text_document_params(skill_buf) }, wait_ms, skill_buf)
  local lens
  for _, candidate in ipairs(lens_response and lens_response.result or {}) do
    if candidate.command and candidate.command.title == "1 probe" then
      lens = candidate
    end
  end
  step("code lens '1 probe' on the fixed heading", lens ~= nil, lens_response)
  vim.fn.setqflist({}, "r", { items = {} })
  client:exec_cmd(lens.command, { bufnr = skill_buf })
  step("showProbes filled the quickfix list with the probe", vim.wait(wait_ms, function()
    local items = vim.fn.getqflist()
    return #items == 1 and vim.api.nvim_buf_get_name(items[1].bufnr) == env.SKILL_EVAL_PROBE
  end, 50), vim.fn.getqflist())
  result.ok = true
end

local ok, failure = xpcall(main, function(message)
  return debug.traceback(tostring(message), 2)
end)
if not ok then
  result.error = failure
end
for _, client in ipairs(vim.lsp.get_clients()) do
  client:stop()
end
vim.wait(2000, function()
  return #vim.lsp.get_clients() == 0
end, 50)
local written = pcall(function()
  local file = assert(io.open(env.SKILL_EVAL_RESULT, "w"))
  file:write(vim.json.encode(result))
  file:close()
end)
vim.cmd((result.ok and written) and "qall!" or "cquit 1")
