-- msmap language server for Python buffers (Neovim 0.7 or later).
-- Optional: vim.g.msmap_cmd (default {'msmap', 'lsp'}) and vim.g.msmap_settings (initializationOptions).
local msmap_client = nil
vim.api.nvim_create_autocmd('FileType', {
  pattern = 'python',
  callback = function(args)
    if msmap_client == nil or vim.lsp.get_client_by_id(msmap_client) == nil then
      msmap_client = vim.lsp.start_client({
        name = 'msmap',
        cmd = vim.g.msmap_cmd or { 'msmap', 'lsp' },
        root_dir = vim.fn.getcwd(),
        init_options = vim.g.msmap_settings or {},
        flags = { debounce_text_changes = 0 },
      })
    end
    vim.lsp.buf_attach_client(args.buf, msmap_client)
  end,
})
