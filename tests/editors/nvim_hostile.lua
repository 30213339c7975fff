-- Driven by test_neovim.py: `nvim --headless --clean -S nvim_hostile.lua`.
--
-- A question.md holding U+2028, U+2029, U+0085 and a form feed (line breaks to
-- Python, not to the LSP nor to Neovim): type a signposting phrase (SE301) on
-- a line after them, check the diagnostic covers exactly the phrase in
-- Neovim's own buffer, move the phrase to another line, remove it, :write, and
-- wait for SE301 to be gone. Then delete a probe folder outside Neovim and wait
-- for its diagnostics to go without any document event (Neovim 0.11 watches no
-- files: the server's sweep finds it). Every step is recorded in a JSON file.
--
-- Inputs (environment): SKILL_EVAL_NVIM_RTP, SKILL_EVAL_LS_CMD (JSON array),
-- SKILL_EVAL_QUESTION, SKILL_EVAL_DOOMED_PROBE (probe.json with SE101 whose
-- folder is deleted), SKILL_EVAL_PHRASE_LINES (JSON: two 0-based lines),
-- SKILL_EVAL_RESULT, SKILL_EVAL_WAIT_MS.

local env = vim.env
local result = { steps = {}, ok = false }
local wait_ms = tonumber(env.SKILL_EVAL_WAIT_MS or "15000")
local PHRASE = "Look carefully"

local function step(name, ok, detail)
  table.insert(result.steps, { name = name, ok = ok and true or false, detail = detail ~= nil and vim.inspect(detail) or nil })
  if not ok then
    error(("step %q failed: %s"):format(name, vim.inspect(detail)), 0)
  end
end

local function coded(bufnr, code)
  return vim.tbl_filter(function(d)
    return d.code == code
  end, vim.diagnostic.get(bufnr))
end

-- What Neovim's buffer holds under a diagnostic (its columns are byte offsets).
local function covered(bufnr, d)
  local line = vim.api.nvim_buf_get_lines(bufnr, d.lnum, d.lnum + 1, false)[1] or ""
  return line:sub(d.col + 1, d.end_col)
end

local function phrase_at(bufnr, lnum)
  local found = coded(bufnr, "SE301")
  return #found == 1 and found[1].lnum == lnum and found[1].end_lnum == lnum and covered(bufnr, found[1]) == PHRASE
end

local function main()
  vim.opt.rtp:append(env.SKILL_EVAL_NVIM_RTP)
  vim.lsp.config("skill_eval", { cmd = vim.json.decode(env.SKILL_EVAL_LS_CMD) })
  vim.lsp.enable("skill_eval")
  local lines = vim.json.decode(env.SKILL_EVAL_PHRASE_LINES)

  vim.cmd.edit(vim.fn.fnameescape(env.SKILL_EVAL_QUESTION))
  local bufnr = vim.api.nvim_get_current_buf()
  step("U+2028, U+2029, U+0085 and form feed do not split Neovim's lines", vim.api.nvim_buf_line_count(bufnr) == tonumber(env.SKILL_EVAL_LINE_COUNT),
    vim.api.nvim_buf_line_count(bufnr))
  step("client attached to question.md", vim.wait(wait_ms, function()
    local client = vim.lsp.get_clients({ bufnr = bufnr, name = "skill_eval" })[1]
    return client ~= nil and client.initialized
  end, 50), nil)
  local client = vim.lsp.get_clients({ bufnr = bufnr, name = "skill_eval" })[1]
  result.offset_encoding = client.offset_encoding
  local doomed = vim.uri_to_bufnr(vim.uri_from_fname(env.SKILL_EVAL_DOOMED_PROBE))
  step("the doomed probe has SE101 from the start-up scan", vim.wait(wait_ms, function()
    return #coded(doomed, "SE101") > 0
  end, 50), vim.diagnostic.get(doomed))
  step("no SE301 before typing", #coded(bufnr, "SE301") == 0, vim.diagnostic.get(bufnr))

  -- Type the phrase at the start of a line below the Unicode separators (incremental sync).
  local first = lines[1]
  vim.api.nvim_buf_set_text(bufnr, first, 0, first, 0, { PHRASE .. " at this. " })
  step("SE301 covers the typed phrase", vim.wait(wait_ms, function()
    return phrase_at(bufnr, first)
  end, 50), vim.diagnostic.get(bufnr))

  -- Move it: delete it there, type it after the emoji on a later line.
  vim.api.nvim_buf_set_text(bufnr, first, 0, first, #(PHRASE .. " at this. "), { "" })
  local second = lines[2]
  local text = vim.api.nvim_buf_get_lines(bufnr, second, second + 1, false)[1]
  local column = #text -- at the end of the line (bytes)
  vim.api.nvim_buf_set_text(bufnr, second, column, second, column, { " " .. PHRASE .. "." })
  step("SE301 moved with the phrase", vim.wait(wait_ms, function()
    return phrase_at(bufnr, second)
  end, 50), vim.diagnostic.get(bufnr))

  -- Remove it and save: nothing stale survives.
  vim.api.nvim_buf_set_text(bufnr, second, column, second, column + #(" " .. PHRASE .. "."), { "" })
  vim.cmd.write()
  step("buffer written", not vim.bo[bufnr].modified, nil)
  step("SE301 gone after the save", vim.wait(wait_ms, function()
    return #coded(bufnr, "SE301") == 0
  end, 50), vim.diagnostic.get(bufnr))
  vim.wait(1500, function()
    return false
  end, 50) -- let workspace-wide rules settle before recording
  result.remaining = vim.tbl_map(function(d)
    return { code = d.code, lnum = d.lnum }
  end, vim.diagnostic.get(bufnr))

  -- A probe folder deleted behind Neovim's back: no event reaches the server.
  vim.fn.delete(vim.fs.dirname(env.SKILL_EVAL_DOOMED_PROBE), "rf")
  step("the deleted probe's diagnostics are cleared", vim.wait(wait_ms, function()
    return #vim.diagnostic.get(doomed) == 0
  end, 50), vim.diagnostic.get(doomed))
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
