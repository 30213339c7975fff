-- skill-eval-ls for Neovim >= 0.11 (`vim.lsp.config` / `vim.lsp.enable`).
--
-- Put this folder on 'runtimepath' (or copy this file into your config's
-- lsp/ folder) and enable it:
--
--   vim.opt.rtp:append("/path/to/skill-eval/editors/nvim")
--   vim.lsp.enable("skill_eval")
--
-- The server attaches only to the files it understands: probe.json,
-- question.md, SKILL.md and output-spec.md (not to every JSON or Markdown
-- buffer). Override anything with vim.lsp.config("skill_eval", { ... }), e.g.
--
--   vim.lsp.config("skill_eval", {
--     cmd = { vim.fn.expand("~/.venvs/skill-eval/bin/skill-eval-ls") },
--     settings = { ["skill-eval"] = { select = { "SE1", "SE2" }, ignore = { "SE402" } } },
--   })

local FIXTURE_NAMES = {
  ["probe.json"] = true,
  ["question.md"] = true,
  ["SKILL.md"] = true,
  ["output-spec.md"] = true,
}

local ROOT_MARKERS = { "skill-eval.toml", ".git" }

---@type vim.lsp.Config
return {
  cmd = { "skill-eval-ls" },
  filetypes = { "json", "markdown" },
  -- Used by root_dir below (a root_dir function takes precedence over
  -- root_markers in vim.lsp.config; they are listed for :checkhealth and readers).
  root_markers = ROOT_MARKERS,
  root_dir = function(bufnr, on_dir)
    local name = vim.api.nvim_buf_get_name(bufnr)
    if name == "" or not FIXTURE_NAMES[vim.fs.basename(name)] then
      return -- not a skill-eval file: do not attach
    end
    local config = vim.lsp.config.skill_eval or {}
    local root = vim.fs.root(bufnr, config.root_markers or ROOT_MARKERS)
    on_dir(root or vim.fs.dirname(name))
  end,
  -- The server's settings section is "skill-eval" (the keys of skill-eval.toml:
  -- select, ignore, per-file-ignores, ...); it asks for it with
  -- workspace/configuration. An empty dict means "the config file decides".
  settings = { ["skill-eval"] = vim.empty_dict() },
  commands = {
    -- SKILL.md's code lenses ("2 probes", see vim.lsp.codelens) run this server
    -- command; it answers with the probes' locations: put them in the quickfix list.
    ["skill-eval.showProbes"] = function(command, ctx)
      local client = assert(vim.lsp.get_client_by_id(ctx.client_id))
      client:request("workspace/executeCommand", { command = command.command, arguments = command.arguments },
        function(err, locations)
          if err then
            vim.notify("skill-eval: " .. tostring(err.message or err), vim.log.levels.ERROR)
          elseif not locations or vim.tbl_isempty(locations) then
            vim.notify("skill-eval: no probe anchors on this heading", vim.log.levels.INFO)
          else
            local items = vim.lsp.util.locations_to_items(locations, client.offset_encoding)
            vim.fn.setqflist({}, " ", { title = "skill-eval: probes of this step", items = items })
            vim.cmd("botright copen")
          end
        end, ctx.bufnr)
    end,
  },
}
