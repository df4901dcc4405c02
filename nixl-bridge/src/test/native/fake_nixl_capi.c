/*
 * A test-only stand-in for NIXL's libnixl_capi.so (tapedeck's own code, not NIXL's): the subset of the nixl_capi_*
 * C API that kvbridge's NIXL backend calls, implemented in one process. Agents live in a global list; a READ is a
 * memcpy from the remote agent's registered memory, checked against both agents' registrations; notifications are
 * queued on the target agent. It lets NixlDataPlane run end to end where libnixl is not installable.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OK 0
#define IN_PROG 1
#define ERR_INVALID_PARAM (-1)
#define ERR_BACKEND (-2)
#define ERR_NOT_FOUND (-6)
#define MD_PREFIX "FAKENIXL:"
#define MAX_DESCS 65536

typedef struct desc
{
    uintptr_t addr;
    size_t len;
} desc;

typedef struct dlist
{
    int mem;
    size_t n;
    desc *descs;
} dlist;

typedef struct msg
{
    struct msg *next;
    char sender[256];
    size_t len;
    char data[];
} msg;

typedef struct agent
{
    struct agent *next;
    char name[256];
    dlist regions;
    char loaded[64][256];
    msg *inbox;
} agent;

typedef struct opt_args
{
    bool has_notif;
    void *notif;
    size_t notif_len;
} opt_args;

typedef struct xfer
{
    agent *owner;
    char remote[256];
    int op;
    dlist local;
    dlist remote_descs;
    void *notif;
    size_t notif_len;
    int status;
} xfer;

typedef struct notif_map
{
    msg *head;
} notif_map;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static agent *agents;

static agent *find(const char *name)
{
    for (agent *a = agents; a != NULL; a = a->next)
    {
        if (strcmp(a->name, name) == 0)
        {
            return a;
        }
    }
    return NULL;
}

static int add_desc(dlist *l, uintptr_t addr, size_t len)
{
    if (l->n >= MAX_DESCS)
    {
        return ERR_BACKEND;
    }
    desc *grown = realloc(l->descs, (l->n + 1) * sizeof(desc));
    if (grown == NULL)
    {
        return ERR_BACKEND;
    }
    l->descs = grown;
    l->descs[l->n].addr = addr;
    l->descs[l->n].len = len;
    l->n++;
    return OK;
}

static bool covered(const dlist *regions, uintptr_t addr, size_t len)
{
    for (size_t i = 0; i < regions->n; i++)
    {
        if (addr >= regions->descs[i].addr && addr + len <= regions->descs[i].addr + regions->descs[i].len)
        {
            return true;
        }
    }
    return false;
}

static int push(agent *to, const char *sender, const void *data, size_t len)
{
    msg *m = malloc(sizeof(msg) + len);
    if (m == NULL)
    {
        return ERR_BACKEND;
    }
    m->next = NULL;
    snprintf(m->sender, sizeof(m->sender), "%s", sender);
    m->len = len;
    memcpy(m->data, data, len);
    msg **tail = &to->inbox;
    while (*tail != NULL)
    {
        tail = &(*tail)->next;
    }
    *tail = m;
    return OK;
}

bool nixl_capi_is_stub(void)
{
    return false;
}

int nixl_capi_create_agent(const char *name, agent **out)
{
    if (name == NULL || out == NULL || strlen(name) >= 256)
    {
        return ERR_INVALID_PARAM;
    }
    pthread_mutex_lock(&lock);
    agent *a = find(name) == NULL ? calloc(1, sizeof(agent)) : NULL;
    if (a != NULL)
    {
        snprintf(a->name, sizeof(a->name), "%s", name);
        a->next = agents;
        agents = a;
    }
    pthread_mutex_unlock(&lock);
    *out = a;
    return a == NULL ? ERR_BACKEND : OK;
}

int nixl_capi_destroy_agent(agent *a)
{
    pthread_mutex_lock(&lock);
    for (agent **p = &agents; *p != NULL; p = &(*p)->next)
    {
        if (*p == a)
        {
            *p = a->next;
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    while (a->inbox != NULL)
    {
        msg *m = a->inbox;
        a->inbox = m->next;
        free(m);
    }
    free(a->regions.descs);
    free(a);
    return OK;
}

int nixl_capi_get_plugin_params(agent *a, const char *plugin, void **mems, void **params)
{
    if (a == NULL || plugin == NULL || strcmp(plugin, "UCX") != 0)
    {
        return ERR_NOT_FOUND;
    }
    *mems = malloc(1);
    *params = malloc(1);
    return OK;
}

int nixl_capi_destroy_mem_list(void *mems)
{
    free(mems);
    return OK;
}

int nixl_capi_destroy_params(void *params)
{
    free(params);
    return OK;
}

int nixl_capi_create_backend(agent *a, const char *plugin, void *params, void **backend)
{
    (void)a;
    (void)plugin;
    (void)params;
    *backend = malloc(1);
    return OK;
}

int nixl_capi_destroy_backend(void *backend)
{
    free(backend);
    return OK;
}

int nixl_capi_create_opt_args(opt_args **args)
{
    *args = calloc(1, sizeof(opt_args));
    return *args == NULL ? ERR_BACKEND : OK;
}

int nixl_capi_destroy_opt_args(opt_args *args)
{
    free(args->notif);
    free(args);
    return OK;
}

int nixl_capi_opt_args_add_backend(opt_args *args, void *backend)
{
    return args == NULL || backend == NULL ? ERR_INVALID_PARAM : OK;
}

int nixl_capi_opt_args_set_notif_msg(opt_args *args, const void *data, size_t len)
{
    free(args->notif);
    args->notif = malloc(len == 0 ? 1 : len);
    memcpy(args->notif, data, len);
    args->notif_len = len;
    return OK;
}

int nixl_capi_opt_args_set_has_notif(opt_args *args, bool has_notif)
{
    args->has_notif = has_notif;
    return OK;
}

int nixl_capi_create_reg_dlist(int mem, dlist **out)
{
    *out = calloc(1, sizeof(dlist));
    (*out)->mem = mem;
    return OK;
}

int nixl_capi_destroy_reg_dlist(dlist *l)
{
    free(l->descs);
    free(l);
    return OK;
}

int nixl_capi_reg_dlist_add_desc(dlist *l, uintptr_t addr, size_t len, uint64_t dev_id, const void *md,
                                 size_t md_len)
{
    (void)dev_id;
    (void)md;
    (void)md_len;
    return add_desc(l, addr, len);
}

int nixl_capi_register_mem(agent *a, dlist *l, opt_args *args)
{
    (void)args;
    pthread_mutex_lock(&lock);
    int rc = OK;
    for (size_t i = 0; i < l->n && rc == OK; i++)
    {
        rc = add_desc(&a->regions, l->descs[i].addr, l->descs[i].len);
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

int nixl_capi_deregister_mem(agent *a, dlist *l, opt_args *args)
{
    (void)args;
    (void)l;
    pthread_mutex_lock(&lock);
    a->regions.n = 0;
    pthread_mutex_unlock(&lock);
    return OK;
}

int nixl_capi_get_local_md(agent *a, void **data, size_t *len)
{
    size_t n = strlen(MD_PREFIX) + strlen(a->name);
    char *md = malloc(n + 1);
    snprintf(md, n + 1, "%s%s", MD_PREFIX, a->name);
    *data = md;
    *len = n;
    return OK;
}

int nixl_capi_load_remote_md(agent *a, const void *data, size_t len, char **name)
{
    size_t prefix = strlen(MD_PREFIX);
    if (len <= prefix || len - prefix >= 256 || memcmp(data, MD_PREFIX, prefix) != 0)
    {
        return ERR_INVALID_PARAM;
    }
    char remote[256];
    memcpy(remote, (const char *)data + prefix, len - prefix);
    remote[len - prefix] = '\0';
    pthread_mutex_lock(&lock);
    int rc = find(remote) == NULL ? ERR_NOT_FOUND : ERR_BACKEND;
    for (int i = 0; i < 64 && rc == ERR_BACKEND; i++)
    {
        if (a->loaded[i][0] == '\0')
        {
            snprintf(a->loaded[i], sizeof(a->loaded[i]), "%s", remote);
            rc = OK;
        }
    }
    pthread_mutex_unlock(&lock);
    *name = rc == OK ? strdup(remote) : NULL;
    return rc;
}

int nixl_capi_invalidate_remote_md(agent *a, const char *remote)
{
    for (int i = 0; i < 64; i++)
    {
        if (strcmp(a->loaded[i], remote) == 0)
        {
            a->loaded[i][0] = '\0';
            return OK;
        }
    }
    return ERR_NOT_FOUND;
}

static bool loaded(const agent *a, const char *remote)
{
    for (int i = 0; i < 64; i++)
    {
        if (strcmp(a->loaded[i], remote) == 0)
        {
            return true;
        }
    }
    return false;
}

int nixl_capi_create_xfer_dlist(int mem, dlist **out)
{
    return nixl_capi_create_reg_dlist(mem, out);
}

int nixl_capi_destroy_xfer_dlist(dlist *l)
{
    return nixl_capi_destroy_reg_dlist(l);
}

int nixl_capi_xfer_dlist_add_desc(dlist *l, uintptr_t addr, size_t len, uint64_t dev_id)
{
    (void)dev_id;
    return add_desc(l, addr, len);
}

static int copy_list(dlist *to, const dlist *from)
{
    to->n = from->n;
    to->descs = malloc((from->n == 0 ? 1 : from->n) * sizeof(desc));
    if (to->descs == NULL)
    {
        return ERR_BACKEND;
    }
    memcpy(to->descs, from->descs, from->n * sizeof(desc));
    return OK;
}

int nixl_capi_create_xfer_req(agent *a, int op, dlist *local, dlist *remote, const char *remote_agent, xfer **out,
                              opt_args *args)
{
    if (!loaded(a, remote_agent) || local->n != remote->n || local->n == 0)
    {
        return ERR_INVALID_PARAM;
    }
    for (size_t i = 0; i < local->n; i++)
    {
        if (local->descs[i].len != remote->descs[i].len || !covered(&a->regions, local->descs[i].addr,
                                                                     local->descs[i].len))
        {
            return ERR_INVALID_PARAM;
        }
    }
    xfer *x = calloc(1, sizeof(xfer));
    x->owner = a;
    x->op = op;
    snprintf(x->remote, sizeof(x->remote), "%s", remote_agent);
    copy_list(&x->local, local);
    copy_list(&x->remote_descs, remote);
    if (args != NULL && args->has_notif && args->notif_len > 0)
    {
        x->notif = malloc(args->notif_len);
        memcpy(x->notif, args->notif, args->notif_len);
        x->notif_len = args->notif_len;
    }
    *out = x;
    return OK;
}

/* Does the whole transfer now and reports IN_PROG; the first get_xfer_status says SUCCESS (or the failure). */
int nixl_capi_post_xfer_req(agent *a, xfer *x, opt_args *args)
{
    (void)args;
    pthread_mutex_lock(&lock);
    agent *remote = find(x->remote);
    x->status = remote == NULL ? -10 : OK;
    for (size_t i = 0; i < x->local.n && x->status == OK; i++)
    {
        if (!covered(&remote->regions, x->remote_descs.descs[i].addr, x->remote_descs.descs[i].len))
        {
            x->status = ERR_INVALID_PARAM;
            break;
        }
        void *local = (void *)x->local.descs[i].addr;
        void *far = (void *)x->remote_descs.descs[i].addr;
        memcpy(x->op == 0 ? local : far, x->op == 0 ? far : local, x->local.descs[i].len);
    }
    if (x->status == OK && x->notif_len > 0)
    {
        x->status = push(remote, a->name, x->notif, x->notif_len);
    }
    pthread_mutex_unlock(&lock);
    return x->status == OK ? IN_PROG : x->status;
}

int nixl_capi_get_xfer_status(agent *a, xfer *x)
{
    (void)a;
    return x->status;
}

int nixl_capi_release_xfer_req(agent *a, xfer *x)
{
    (void)a;
    (void)x;
    return OK;
}

int nixl_capi_destroy_xfer_req(xfer *x)
{
    free(x->local.descs);
    free(x->remote_descs.descs);
    free(x->notif);
    free(x);
    return OK;
}

int nixl_capi_gen_notif(agent *a, const char *remote_agent, const void *data, size_t len, opt_args *args)
{
    (void)args;
    pthread_mutex_lock(&lock);
    agent *remote = loaded(a, remote_agent) ? find(remote_agent) : NULL;
    int rc = remote == NULL ? ERR_NOT_FOUND : push(remote, a->name, data, len);
    pthread_mutex_unlock(&lock);
    return rc;
}

int nixl_capi_create_notif_map(notif_map **out)
{
    *out = calloc(1, sizeof(notif_map));
    return OK;
}

int nixl_capi_destroy_notif_map(notif_map *map)
{
    while (map->head != NULL)
    {
        msg *m = map->head;
        map->head = m->next;
        free(m);
    }
    free(map);
    return OK;
}

int nixl_capi_get_notifs(agent *a, notif_map *map, opt_args *args)
{
    (void)args;
    pthread_mutex_lock(&lock);
    msg **tail = &map->head;
    while (*tail != NULL)
    {
        tail = &(*tail)->next;
    }
    *tail = a->inbox;
    a->inbox = NULL;
    pthread_mutex_unlock(&lock);
    return OK;
}

/* Senders in first-seen order. */
static const char *sender_at(notif_map *map, size_t index, size_t *count)
{
    size_t seen = 0;
    for (msg *m = map->head; m != NULL; m = m->next)
    {
        bool first = true;
        for (msg *e = map->head; e != m; e = e->next)
        {
            first = first && strcmp(e->sender, m->sender) != 0;
        }
        if (first)
        {
            if (seen == index)
            {
                return m->sender;
            }
            seen++;
        }
    }
    *count = seen;
    return NULL;
}

int nixl_capi_notif_map_size(notif_map *map, size_t *size)
{
    *size = 0;
    sender_at(map, SIZE_MAX, size);
    return OK;
}

int nixl_capi_notif_map_get_agent_at(notif_map *map, size_t index, const char **name)
{
    size_t count = 0;
    *name = sender_at(map, index, &count);
    return *name == NULL ? ERR_INVALID_PARAM : OK;
}

int nixl_capi_notif_map_get_notifs_size(notif_map *map, const char *sender, size_t *size)
{
    *size = 0;
    for (msg *m = map->head; m != NULL; m = m->next)
    {
        *size += strcmp(m->sender, sender) == 0;
    }
    return OK;
}

int nixl_capi_notif_map_get_notif(notif_map *map, const char *sender, size_t index, const void **data, size_t *len)
{
    size_t i = 0;
    for (msg *m = map->head; m != NULL; m = m->next)
    {
        if (strcmp(m->sender, sender) == 0 && i++ == index)
        {
            *data = m->data;
            *len = m->len;
            return OK;
        }
    }
    return ERR_INVALID_PARAM;
}
