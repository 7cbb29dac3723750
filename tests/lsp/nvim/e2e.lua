-- Drives the ReuseLens server from a real headless Neovim (0.7+, Debian's package), set up with the snippet
-- of docs/lsp.md, and writes what the editor received to $RL_OUT as JSON. Run by tests/lsp/test_neovim.py:
--   nvim --headless -u NONE -c "luafile tests/lsp/nvim/e2e.lua"
local out = { progress = {}, errors = {} }
local function finish()
  local f = io.open(os.getenv("RL_OUT"), "w")
  f:write(vim.fn.json_encode(out))
  f:close()
  vim.cmd("qa!")
end

local function wait(ms, what, pred)
  if not vim.wait(ms, pred, 50) then error("timed out waiting for " .. what) end
end

-- The Neovim snippet of docs/lsp.md, run as written except for its settings and init-options lines.
local function load_documented_snippet()
  local docs = io.open(os.getenv("RL_DOCS")):read("*a")
  local snippet = docs:match("<!%-%- neovim%-snippet %-%->%s*```lua\n(.-)```")
  if not snippet then error("no neovim snippet in docs/lsp.md") end
  local settings = "local reuselens_settings = vim.fn.json_decode(os.getenv('RL_SETTINGS'))"
  local replaced
  snippet, replaced = snippet:gsub("local reuselens_settings = [^\n]*", function() return settings end, 1)
  if replaced ~= 1 then error("the snippet has no reuselens_settings line") end
  -- The test trusts its own workspace the way a user would: in their editor's configuration (init_options).
  local init_options = "local reuselens_init_options = { allowWorkspaceCommands = true }"
  snippet, replaced = snippet:gsub("local reuselens_init_options = [^\n]*", function() return init_options end, 1)
  if replaced ~= 1 then error("the snippet has no reuselens_init_options line") end
  assert(loadstring(snippet, "docs/lsp.md"))()
end

local ok, err = pcall(function()
  vim.cmd("filetype on")
  local root = os.getenv("RL_ROOT")
  vim.lsp.handlers["$/progress"] = function(_, result)
    table.insert(out.progress, result.value.kind .. (result.value.message and (":" .. result.value.message) or ""))
  end
  load_documented_snippet()
  vim.cmd("edit " .. root .. "/stencil.cu")
  local buf = vim.api.nvim_get_current_buf()
  out.filetype = vim.bo[buf].filetype
  local client
  wait(10000, "the snippet's client", function()
    for _, c in pairs(vim.lsp.buf_get_clients(buf)) do
      if c.name == "reuselens" then client = c end
    end
    return client ~= nil
  end)
  local id = client.id

  wait(20000, "diagnostics", function() return #vim.diagnostic.get(buf) >= 4 end)
  out.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local lsp = (d.user_data or {}).lsp or {}
    table.insert(out.diagnostics, { line = d.lnum + 1, code = lsp.code or d.code, source = d.source,
                                    severity = d.severity, message = d.message })
  end

  -- No vim.lsp.codelens.refresh() here: the lenses must come by themselves (the server's refresh request).
  wait(10000, "code lenses", function()
    local lenses = vim.lsp.codelens.get(buf)
    if #lenses == 0 then return false end
    for _, l in ipairs(lenses) do if not l.command then return false end end
    return true
  end)
  out.lenses = {}
  for _, l in ipairs(vim.lsp.codelens.get(buf)) do
    table.insert(out.lenses, { line = l.range.start.line + 1, title = l.command.title })
  end

  local uri = vim.uri_from_bufnr(buf)
  local hover = vim.lsp.buf_request_sync(buf, "textDocument/hover",
    { textDocument = { uri = uri }, position = { line = 14, character = 30 } }, 10000)
  out.hover = hover[id].result.contents.value

  local line_diags = vim.lsp.diagnostic.get_line_diagnostics(buf, 14)
  local actions = vim.lsp.buf_request_sync(buf, "textDocument/codeAction", {
    textDocument = { uri = uri },
    range = { start = { line = 14, character = 0 }, ["end"] = { line = 14, character = 0 } },
    context = { diagnostics = line_diags },
  }, 10000)
  out.actions = {}
  local edit
  for _, a in ipairs(actions[id].result) do
    table.insert(out.actions, a.title)
    if a.edit then edit = a.edit end
  end
  vim.lsp.util.apply_workspace_edit(edit, client.offset_encoding or "utf-16")
  out.line8 = vim.api.nvim_buf_get_lines(buf, 7, 8, false)[1]

  -- :write -> didSave -> the stand-in profiler emits the run after the fix
  vim.cmd("write")
  wait(20000, "re-profiled diagnostics", function()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.lnum == 14 then return false end
    end
    return #vim.diagnostic.get(buf) > 0
  end)
  out.after_save = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do table.insert(out.after_save, d.lnum + 1) end
  table.sort(out.after_save)
  wait(5000, "progress end", function() return out.progress[#out.progress] and out.progress[#out.progress]:sub(1, 3) == "end" end)
  vim.lsp.stop_client(id)
end)
if not ok then table.insert(out.errors, tostring(err)) end
finish()
