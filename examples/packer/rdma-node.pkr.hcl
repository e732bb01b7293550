# Bake an RDMA node image with hpcnet.rdma: Packer boots the base image in QEMU, the ansible
# provisioner runs playbooks/tune_rdma.yml in bake mode (rdma_mode=bake: only what boots - sysctl.d,
# .link files, modules-load.d, the IRQ, RoCE QoS and soft-RoCE boot units; nothing live), and the first boot
# of every node made from the image applies it.  The build VM has none of the target NICs: each
# rdma_interfaces entry is selected by name or driver with a match that works on the target nodes
# (original_name, path with match_value, driver) - never by a MAC address seen at build time.
#
#   packer plugins install (the qemu and ansible plugins), then:
#   packer build -var base_image=/images/debian-12-genericcloud-amd64.qcow2 rdma-node.pkr.hcl
#
# Every variable below named rdma_* is the hpcnet.rdma.tuning role variable of the same name
# (roles/tuning/meta/argument_specs.yml); tests/unit/test_packer_example.py checks that they match.

variable "base_image" {
  type        = string
  description = "Path or URL of the base qcow2 image (a cloud image with python3 and sshd)."
}

variable "base_image_checksum" {
  type        = string
  default     = "none"
  description = "Checksum of the base image (none: not checked)."
}

variable "ssh_username" {
  type    = string
  default = "debian"
}

variable "playbook" {
  type        = string
  default     = "../../playbooks/tune_rdma.yml"
  description = "The collection's tune playbook (from a checkout, or the installed collection's playbooks/)."
}

variable "rdma_profile" {
  type        = string
  default     = "mpi"
  description = "Workload profile (balanced, mpi, dl_training, low_latency, storage, offpeak or your own)."
}

variable "rdma_stack" {
  type    = bool
  default = true
}

variable "rdma_nic_match" {
  type        = string
  default     = "driver"
  description = "How the .link files match the NICs at boot where an entry does not say (never mac in a bake)."
}

variable "rdma_interfaces" {
  type = list(any)
  default = [
    { driver = "mlx5_core", match = "driver", mtu = 9000 }
  ]
}

variable "rdma_irq_interfaces" {
  type    = list(any)
  default = []
}

variable "rdma_irqbalance" {
  type    = string
  default = "ban"
}

# Lossless RoCE on the same NICs: the QoS boot unit finds them at boot (by name or driver) and sets
# PFC, the DSCP map and trust (dcb, or mlnx_qos where installed) and the RDMA CM ToS
variable "rdma_roce_qos" {
  type = map(any)
  default = {
    interfaces = [{ driver = "mlx5_core" }]
    pfc        = [3]
    dscp_map   = { "26" = 3 }
    tos        = 106
  }
}

variable "rdma_sysctls" {
  type    = map(string)
  default = {}
}

source "qemu" "rdma_node" {
  iso_url          = var.base_image
  iso_checksum     = var.base_image_checksum
  disk_image       = true
  format           = "qcow2"
  headless         = true
  ssh_username     = var.ssh_username
  ssh_timeout      = "20m"
  shutdown_command = "sudo shutdown -P now"
  vm_name          = "rdma-node.qcow2"
}

build {
  sources = ["source.qemu.rdma_node"]

  provisioner "ansible" {
    playbook_file = var.playbook
    groups        = ["rdma_nodes"]
    user          = var.ssh_username
    use_proxy     = false
    extra_arguments = [
      "-e", "rdma_mode=bake",
      "-e", jsonencode({
        rdma_profile        = var.rdma_profile
        rdma_stack          = var.rdma_stack
        rdma_nic_match      = var.rdma_nic_match
        rdma_interfaces     = var.rdma_interfaces
        rdma_irq_interfaces = var.rdma_irq_interfaces
        rdma_irqbalance     = var.rdma_irqbalance
        rdma_sysctls        = var.rdma_sysctls
        rdma_roce_qos       = var.rdma_roce_qos
      }),
    ]
    ansible_env_vars = ["ANSIBLE_FORCE_COLOR=false"]
  }
}
