-- Driven by test_neovim.py: `nvim --headless --clean -S nvim_code_action.lua`.
--
-- Loads editors/nvim/lsp/skill_eval.lua as a user does, opens a probe.json,
-- lists the code actions the server offers there, then applies the titles of
-- SKILL_EVAL_APPLY (JSON array) one after the other through
-- vim.lsp.buf.code_action({ filter = <that title>, apply = true }): Neovim
-- sends the action's command (workspace/executeCommand) and the server runs
-- the agents. Each is done when its work-done progress ends (LspProgress).
-- Every step goes into a JSON result file. Exit status: 0 when all passed.
--
-- Inputs (environment): SKILL_EVAL_NVIM_RTP, SKILL_EVAL_LS_CMD (JSON array),
-- SKILL_EVAL_PROBE, SKILL_EVAL_APPLY, SKILL_EVAL_RESULT, SKILL_EVAL_WAIT_MS.

local env = vim.env
local result = { steps = {}, ok = false, progress = {}, applied = {} }
local wait_ms = tonumber(env.SKILL_EVAL_WAIT_MS or "15000")

local function step(name, ok, detail)
  table.insert(result.steps, { name = name, ok = ok and true or false, detail = detail ~= nil and vim.inspect(detail) or nil })
  if not ok then
    error(("step %q failed: %s"):format(name, vim.inspect(detail)), 0)
  end
end

local function client_for(bufnr)
  return vim.lsp.get_clients({ bufnr = bufnr, name = "skill_eval" })[1]
end

local function main()
  vim.opt.rtp:append(env.SKILL_EVAL_NVIM_RTP)
  vim.lsp.config("skill_eval", { cmd = vim.json.decode(env.SKILL_EVAL_LS_CMD) })
  vim.lsp.enable("skill_eval")

  local ended = 0
  vim.api.nvim_create_autocmd("LspProgress", {
    callback = function(event)
      local value = event.data.params.value
      table.insert(result.progress, { kind = value.kind, title = value.title, message = value.message })
      if value.kind == "end" and (result.progress_titles or {})[event.data.params.token] then
        ended = ended + 1
      end
      if value.kind == "begin" and value.title and value.title:find("skill-eval: ", 1, true)
        and (value.title:find("running", 1, true) or value.title:find("calibrating", 1, true)) then
        result.progress_titles = result.progress_titles or {}
        result.progress_titles[event.data.params.token] = value.title
      end
    end,
  })

  vim.cmd.edit(vim.fn.fnameescape(env.SKILL_EVAL_PROBE))
  local bufnr = vim.api.nvim_get_current_buf()
  step("client attached to probe.json", vim.wait(wait_ms, function()
    local client = client_for(bufnr)
    return client ~= nil and client.initialized
  end, 50), nil)
  -- the start-up scan is over when its progress ended
  step("start-up scan done", vim.wait(wait_ms, function()
    for _, item in ipairs(result.progress) do
      if item.kind == "end" then
        return true
      end
    end
    return false
  end, 50), result.progress)

  -- what vim.lsp.buf.code_action() would list here (no `only`)
  vim.api.nvim_win_set_cursor(0, { 3, 0 })
  local params = vim.lsp.util.make_range_params(0, client_for(bufnr).offset_encoding)
  params.context = { diagnostics = {}, triggerKind = 1 }
  local responses = vim.lsp.buf_request_sync(bufnr, "textDocument/codeAction", params, wait_ms)
  result.titles = {}
  for _, response in pairs(responses or {}) do
    for _, action in ipairs(response.result or {}) do
      table.insert(result.titles, action.title)
    end
  end
  step("code actions listed", #result.titles > 0, responses)

  for index, title in ipairs(vim.json.decode(env.SKILL_EVAL_APPLY)) do
    local before = ended
    vim.lsp.buf.code_action({
      filter = function(action)
        return action.title == title
      end,
      apply = true,
    })
    step(("%q ran to the end of its progress"):format(title), vim.wait(wait_ms, function()
      return ended > before
    end, 50), result.progress)
    table.insert(result.applied, { index = index, title = title })
  end
  result.ok = true
end

local ok, failure = xpcall(main, function(message)
  return debug.traceback(tostring(message), 2)
end)
if not ok then
  result.error = failure
end
result.progress_titles = nil
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
