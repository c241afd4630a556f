-- Drive `msmap lsp` from Neovim's own LSP client (Neovim 0.7, headless, `-u NONE`).
-- The client is started by neovim_config.lua, the snippet docs/lsp.md shows, loaded first.
-- Inputs come from the environment (see test_neovim.py); results go to MSMAP_NVIM_OUT as JSON.
-- Every wait is bounded; whatever happens, Neovim quits.

local env = vim.env
local results = { steps = {} }
local TIMEOUT = 20000

local function step(name, value)
  table.insert(results.steps, name)
  if value ~= nil then results[name] = value end
end

local function finish()
  local out = io.open(env.MSMAP_NVIM_OUT, 'w')
  out:write(vim.fn.json_encode(results))
  out:close()
  vim.cmd('qa!')
end

local function first_result(responses, client_id)
  local response = responses and responses[client_id]
  if not response then return nil end
  if response.err then error('LSP error: ' .. vim.inspect(response.err)) end
  return response.result
end

local function run()
  vim.g.msmap_cmd = { env.MSMAP_NVIM_PYTHON, '-m', 'kb', 'lsp' }
  vim.g.msmap_settings = { targetFamily = 'classic', severity = { guess = 'off' } }
  vim.cmd('luafile ' .. vim.fn.fnameescape(env.MSMAP_NVIM_CONFIG))
  vim.cmd('edit ' .. vim.fn.fnameescape(env.MSMAP_NVIM_FILE))
  local bufnr = vim.api.nvim_get_current_buf()
  vim.bo[bufnr].filetype = 'python'  -- -u NONE: no filetype detection; this fires the FileType autocommand

  -- Neovim lists a client for the buffer once it has initialized.
  assert(vim.wait(TIMEOUT, function() return next(vim.lsp.buf_get_clients(bufnr)) ~= nil end, 20),
    'no client attached and initialized')
  local client_id = next(vim.lsp.buf_get_clients(bufnr))
  local client = vim.lsp.get_client_by_id(client_id)
  step('attached')

  assert(vim.wait(TIMEOUT, function() return #vim.diagnostic.get(bufnr) > 0 end, 20), 'no diagnostics')
  local diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(diagnostics, { lnum = d.lnum, col = d.col, severity = d.severity, message = d.message })
  end
  table.sort(diagnostics, function(a, b) return a.lnum < b.lnum or (a.lnum == b.lnum and a.col < b.col) end)
  step('diagnostics', diagnostics)

  -- Hover on `nn.Linear` (line 4, 1-based; column 13, 0-based).
  vim.api.nvim_win_set_cursor(0, { 4, 13 })
  local hover = first_result(vim.lsp.buf_request_sync(bufnr, 'textDocument/hover',
    vim.lsp.util.make_position_params(), TIMEOUT), client_id)
  step('hover', hover and hover.contents.value)

  -- The quick-fix under the cursor, applied by Neovim.
  local params = vim.lsp.util.make_range_params()
  params.context = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics(bufnr), only = { 'quickfix' } }
  local actions = first_result(vim.lsp.buf_request_sync(bufnr, 'textDocument/codeAction', params, TIMEOUT),
    client_id) or {}
  local action = actions[1]
  assert(action and action.edit, 'no quick-fix with an edit')
  step('quickfix', action.title)
  vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding)

  -- Fix-all through the server command: the server sends workspace/applyEdit, Neovim applies it.
  local changed = vim.api.nvim_buf_get_changedtick(bufnr)
  local count = client.request_sync('workspace/executeCommand',
    { command = 'msmap.fixAll', arguments = { vim.uri_from_bufnr(bufnr) } }, TIMEOUT, bufnr)
  assert(count and not count.err, 'msmap.fixAll failed: ' .. vim.inspect(count))
  step('fix_all_count', count.result)
  assert(vim.wait(TIMEOUT, function() return vim.api.nvim_buf_get_changedtick(bufnr) ~= changed end, 20),
    'the fix-all edit never arrived')

  vim.cmd('write')
  step('written')
  vim.lsp.stop_client(client_id)
  vim.wait(5000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 20)
end

local ok, err = pcall(run)
if not ok then results.error = tostring(err) end
finish()
