# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The hpcnet.rdma lab as a library (standard library only); lab/labctl.py is its command line.

  common      paths, logging (log/die), running commands, hashing
  debian      the host's Debian mirror (from apt's sources), debootstrap, rootfs tarballs
  inventory   the lab inventories (inventories/lab/, inventories/lab-vm/)
  containers  the Docker engine, the lab images and the container nodes
  vmstate     what every VM command shares: run records, our QEMU processes, ssh to a guest
  vmimage     the VM disk image (debootstrap rootfs + the host's kernel)
  vmrun       VM runs: up, down, list, ssh
  vmdiag      a VM in trouble: its serial console, QEMU's state over QMP, where its vCPUs are

lab/snapshot.py is not part of it: it runs on the nodes, as a standalone script.
"""
